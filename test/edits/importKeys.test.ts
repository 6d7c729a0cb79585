// keys.migrateKeys' two halves (src/edits/importKeys.ts) with the store changing between
// them, as other writers change it while a call is drafted outside its transaction: a hash
// taken meanwhile is failed, an externalId given an identity meanwhile is used (no second
// identity), and the keys written through the call's write plan read back as insertKey
// writes them.
import { describe, expect, it } from 'vitest';
import { createHash, randomBytes } from 'node:crypto';
import { draftImport, writeImport, type MigrateKeysInput } from '../../src/edits/importKeys.js';
import { insertKey, draftKey } from '../../src/edits/newKey.js';
import { insertApi } from '../../src/store/apis.js';
import { direct } from '../../src/store/db.js';
import { findIdentity, insertIdentity } from '../../src/store/identities.js';
import { getKeyRecord, readCredits } from '../../src/store/keys.js';
import { apiKeyIds } from '../../src/store/apis.js';
import { createMigration, keyAtHash } from '../../src/store/migrations.js';
import { idxAll } from '../../src/store/indexes.js';
import { IDX } from '../../src/store/records.js';
import { tempStore } from '../helpers/tempStore.js';

tempStore('keyward-import-');

const WS = 'ws_import_test';
const NOW = 1_790_000_000_000;
const hex = (): string => createHash('sha256').update(randomBytes(16)).digest('hex');

function setUp(): { migrationId: string; apiId: string } {
  return direct.transact(() => ({ migrationId: createMigration(WS, 'sha256', NOW).id, apiId: insertApi(WS, 'import', NOW).id }));
}

const importNow = (input: MigrateKeysInput) => {
  const drafted = draftImport(input, WS, NOW);
  return direct.transact(() => writeImport(WS, input.apiId, drafted, NOW));
};

describe('keys.migrateKeys drafted, then written', () => {
  it('writes planned keys with their identity, indexes and credits, as insertKey does', () => {
    const { migrationId, apiId } = setUp();
    const [a, b, c] = [hex(), hex(), hex()];
    const result = importNow({
      migrationId,
      apiId,
      keys: [
        { hash: a, externalId: 'cust_shared', credits: { remaining: 7 }, enabled: true },
        { hash: b, externalId: 'cust_shared', enabled: true },
        // roles: not planned, written by insertKey after the plan
        { hash: c, externalId: 'cust_shared', roles: ['importer'], enabled: true },
        { hash: a, enabled: true },
      ],
    });
    expect(result.failed).toEqual([a]);
    expect(result.migrated.map((m) => m.hash)).toEqual([a, b, c]);
    const identity = findIdentity(WS, 'cust_shared');
    expect(identity).toBeDefined();
    expect(idxAll(IDX.wsIdent(WS))).toEqual([identity?.id]);
    const ids = result.migrated.map((m) => m.keyId);
    expect(idxAll(IDX.identKey(identity?.id ?? '')).sort()).toEqual([...ids].sort());
    expect(apiKeyIds(apiId, undefined, 10).sort()).toEqual([...ids].sort());
    for (const id of ids) expect(getKeyRecord(id)).toMatchObject({ id, apiId, workspaceId: WS, identityId: identity?.id, externalId: 'cust_shared' });
    expect(readCredits(ids[0] ?? '', NOW)?.[0]).toBe(7);
    expect(readCredits(ids[1] ?? '', NOW)).toBeUndefined();
  });

  it('fails a hash another writer stored after the draft, and writes the rest', () => {
    const { migrationId, apiId } = setUp();
    const [a, b] = [hex(), hex()];
    const input: MigrateKeysInput = { migrationId, apiId, keys: [{ hash: a, enabled: true }, { hash: b, enabled: true }] };
    const drafted = draftImport(input, WS, NOW);
    const other = importNow({ migrationId, apiId, keys: [{ hash: b, enabled: true }] });
    expect(other.migrated).toHaveLength(1);
    const result = direct.transact(() => writeImport(WS, apiId, drafted, NOW));
    expect(result).toEqual({ migrated: [{ hash: a, keyId: expect.stringMatching(/^key_/) }], failed: [b] });
    expect(keyAtHash(Buffer.from(b, 'hex'))?.id).toBe(other.migrated[0]?.keyId);
  });

  it('uses the identity an externalId was given after the draft, creating none', () => {
    const { migrationId, apiId } = setUp();
    const [a, b] = [hex(), hex()];
    const input: MigrateKeysInput = { migrationId, apiId, keys: [{ hash: a, externalId: 'cust_late', enabled: true }, { hash: b, externalId: 'cust_late', credits: { remaining: 3 }, enabled: true }] };
    const drafted = draftImport(input, WS, NOW);
    const meanwhile = direct.transact(() => insertIdentity(WS, 'cust_late', {}, NOW));
    const result = direct.transact(() => writeImport(WS, apiId, drafted, NOW));
    expect(result.failed).toEqual([]);
    const ids = result.migrated.map((m) => m.keyId);
    for (const id of ids) expect(getKeyRecord(id)).toMatchObject({ identityId: meanwhile.id, externalId: 'cust_late' });
    expect(idxAll(IDX.wsIdent(WS)).filter((id) => findIdentity(WS, id)?.externalId === 'cust_late')).toEqual([meanwhile.id]);
    expect(idxAll(IDX.identKey(meanwhile.id)).sort()).toEqual([...ids].sort());
    expect(readCredits(ids[1] ?? '', NOW)?.[0]).toBe(3);
  });

  it('takes back every key of the call when one write fails', () => {
    const { migrationId, apiId } = setUp();
    const drafted = draftImport({ migrationId, apiId, keys: [{ hash: hex(), enabled: true }, { hash: hex(), enabled: true }] }, WS, NOW);
    const before = apiKeyIds(apiId, undefined, 10);
    expect(() =>
      direct.transact(() => {
        writeImport(WS, apiId, drafted, NOW);
        // A later write of the same transaction fails: roles of a key must exist for createKey.
        insertKey(draftKey({ id: 'key_x', apiId, workspaceId: WS, hash: randomBytes(32).toString('base64'), start: '', byteLength: 16 }, { roles: ['nosuch'], enabled: true }, NOW), 'existing', NOW);
      }),
    ).toThrow();
    expect(apiKeyIds(apiId, undefined, 10)).toEqual(before);
  });
});
