// keys.migrateKeys 404: an unknown migration, another workspace's migration, an unknown /
// deleted / foreign API; nothing of a refused call is written. keys.verifyKey {migrationId}
// answers 404 migration_not_found the same way.
import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, createApi, expectError, expectOk } from '../../helpers/server.js';
import { uniq, verify } from '../../helpers/keys.js';
import { legacyKey, newMigration, seamKey, sha256Hex } from '../../helpers/migrations.js';

const srv = inProcessServer();

async function listKeyIds(apiId: string, rootKey?: string): Promise<string[]> {
  return (expectOk(await call(srv(), 'apis.listKeys', { apiId }, rootKey === undefined ? {} : { rootKey })) as { keyId: string }[]).map((k) => k.keyId);
}

describe('keys.migrateKeys 404', () => {
  it.each([
    ['an unknown migrationId', 'mig_doesnotexist'],
    ['a 3-char migrationId (valid shape, no such migration)', 'abc'],
    ['a 255-char migrationId', 'm'.repeat(255)],
  ])('%s → 404 migration_not_found naming it; nothing written', async (_why, migrationId) => {
    const apiId = await createApi(srv());
    const stem = uniq('nf');
    const key = legacyKey();
    const error = expectError(await call(srv(), 'keys.migrateKeys', { migrationId, apiId, keys: [{ hash: sha256Hex(key), externalId: `${stem}.u`, roles: [`${stem}_r`] }] }), 404, 'migration_not_found');
    expect(error.detail).toContain(migrationId);
    expect(await listKeyIds(apiId)).toEqual([]);
    expectError(await call(srv(), 'identities.getIdentity', { identity: `${stem}.u` }), 404);
    expectError(await call(srv(), 'permissions.getRole', { role: `${stem}_r` }), 404);
    expect(await verify(srv(), key)).toEqual({ valid: false, code: 'NOT_FOUND' });
  });

  it('an unknown migration is 404 even when the hash would not fit any algorithm (the migration is looked up first)', async () => {
    const apiId = await createApi(srv());
    expectError(await call(srv(), 'keys.migrateKeys', { migrationId: 'mig_doesnotexist', apiId, keys: [{ hash: 'not-a-hash' }] }), 404, 'migration_not_found');
  });

  it('a migration of another workspace → 404 migration_not_found; that workspace can use it', async () => {
    const apiId = await createApi(srv());
    const otherWs = srv().newWorkspace();
    const foreignMig = newMigration(srv(), 'sha256', otherWs);
    const key = legacyKey();
    const error = expectError(await call(srv(), 'keys.migrateKeys', { migrationId: foreignMig, apiId, keys: [{ hash: sha256Hex(key) }] }), 404, 'migration_not_found');
    expect(error.detail).toContain(foreignMig);
    expect(await listKeyIds(apiId)).toEqual([]);

    const foreignRoot = srv().rootKeyWith(['*'], otherWs).key;
    const foreignApi = expectOk(await call(srv(), 'apis.createApi', { name: 'foreign-api' }, { rootKey: foreignRoot })).apiId as string;
    const res = expectOk(await call(srv(), 'keys.migrateKeys', { migrationId: foreignMig, apiId: foreignApi, keys: [{ hash: sha256Hex(key) }] }, { rootKey: foreignRoot }));
    expect(res).toEqual({ migrated: [{ hash: sha256Hex(key), keyId: expect.stringMatching(/^key_/) }], failed: [] });
    // The bootstrap workspace's root key does not see the other workspace's key.
    expect(await verify(srv(), key)).toEqual({ valid: false, code: 'NOT_FOUND' });
    expect(expectOk(await call(srv(), 'keys.verifyKey', { key }, { rootKey: foreignRoot }))).toMatchObject({ valid: true, code: 'VALID', keyId: res.migrated[0].keyId });
  });

  it.each([
    ['an unknown apiId', 'api_doesnotexist'],
    ['a 3-char apiId (valid shape, no such API)', 'abc'],
  ])('%s → 404 api_not_found', async (_why, apiId) => {
    const mig = newMigration(srv(), 'sha256');
    const key = legacyKey();
    expectError(await call(srv(), 'keys.migrateKeys', { migrationId: mig, apiId, keys: [{ hash: sha256Hex(key) }] }), 404, 'api_not_found');
    expect(await verify(srv(), key)).toEqual({ valid: false, code: 'NOT_FOUND' });
  });

  it('a deleted API → 404 api_not_found', async () => {
    const apiId = await createApi(srv());
    expectOk(await call(srv(), 'apis.deleteApi', { apiId }));
    const mig = newMigration(srv(), 'sha256');
    expectError(await call(srv(), 'keys.migrateKeys', { migrationId: mig, apiId, keys: [{ hash: sha256Hex(legacyKey()) }] }), 404, 'api_not_found');
  });

  it('an API of another workspace (its * root key, its own migration) → 404 api_not_found', async () => {
    const apiId = await createApi(srv());
    const otherWs = srv().newWorkspace();
    const root = srv().rootKeyWith(['*'], otherWs).key;
    const mig = newMigration(srv(), 'sha256', otherWs);
    expectError(await call(srv(), 'keys.migrateKeys', { migrationId: mig, apiId, keys: [{ hash: sha256Hex(legacyKey()) }] }, { rootKey: root }), 404, 'api_not_found');
    expect(await listKeyIds(apiId)).toEqual([]);
  });
});

describe('keys.verifyKey {migrationId} 404', () => {
  it('an unknown migrationId → 404 migration_not_found (for any key)', async () => {
    const apiId = await createApi(srv());
    const mig = newMigration(srv(), 'sha256');
    const key = legacyKey();
    expectOk(await call(srv(), 'keys.migrateKeys', { migrationId: mig, apiId, keys: [{ hash: sha256Hex(key) }] }));
    expectError(await call(srv(), 'keys.verifyKey', { key, migrationId: 'mig_doesnotexist' }), 404, 'migration_not_found');
    expectError(await call(srv(), 'keys.verifyKey', { key: legacyKey(), migrationId: 'mig_doesnotexist' }), 404, 'migration_not_found');
  });

  it('another workspace\'s migration → 404 migration_not_found; a pending seam key is not moved', async () => {
    const apiId = await createApi(srv());
    const mig = newMigration(srv(), 'github.com/seamapi/prefixed-api-key');
    const seam = seamKey();
    const keyId = (expectOk(await call(srv(), 'keys.migrateKeys', { migrationId: mig, apiId, keys: [{ hash: seam.hash }] })).migrated[0] as { keyId: string }).keyId;
    const otherWs = srv().newWorkspace();
    const foreignMig = newMigration(srv(), 'github.com/seamapi/prefixed-api-key', otherWs);
    expectError(await call(srv(), 'keys.verifyKey', { key: seam.key, migrationId: foreignMig }), 404, 'migration_not_found');
    // The other workspace's root key with this workspace's migration: 404 too.
    const foreignRoot = srv().rootKeyWith(['*'], otherWs).key;
    expectError(await call(srv(), 'keys.verifyKey', { key: seam.key, migrationId: mig }, { rootKey: foreignRoot }), 404, 'migration_not_found');
    expect(await verify(srv(), seam.key)).toEqual({ valid: false, code: 'NOT_FOUND' });
    expect(expectOk(await call(srv(), 'keys.getKey', { keyId })).start).toBe('');
    expect(await verify(srv(), seam.key, { migrationId: mig })).toMatchObject({ valid: true, code: 'VALID', keyId });
  });
});
