// keys.migrateKeys 400: the body's bounds (keys 1..1000, migrationId 3..255, hash required),
// a hash not of the migration's algorithm (location body.keys[i].hash), a key's field errors
// located at body.keys[i].…, and all-or-nothing: a refused call writes none of its keys,
// identities, permissions or roles.
import { beforeAll, describe, expect, it } from 'vitest';
import type { MigrationAlgorithm } from '../../../src/domain/legacyHash.js';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, createApi, expectError, expectOk } from '../../helpers/server.js';
import { expect400, uniq, verify } from '../../helpers/keys.js';
import { legacyKey, newMigration, seamKey, sha256Base64, sha256Hex } from '../../helpers/migrations.js';

const srv = inProcessServer();
let apiId = '';
const mig: Record<MigrationAlgorithm, string> = { sha256: '', 'sha256-base64': '', 'github.com/seamapi/prefixed-api-key': '' };
beforeAll(async () => {
  apiId = await createApi(srv());
  for (const algorithm of Object.keys(mig) as MigrationAlgorithm[]) mig[algorithm] = newMigration(srv(), algorithm);
});

const good = (): { hash: string } => ({ hash: sha256Hex(legacyKey()) });
const rl = (name: string) => ({ name, limit: 1, duration: 1000 });

async function listKeyIds(id: string): Promise<string[]> {
  return (expectOk(await call(srv(), 'apis.listKeys', { apiId: id, limit: 100 })) as { keyId: string }[]).map((k) => k.keyId);
}

describe('keys.migrateKeys 400: the body', () => {
  const CASES: [string, () => Record<string, unknown>, string][] = [
    ['keys empty', () => ({ keys: [] }), 'keys'],
    ['1001 keys', () => ({ keys: Array.from({ length: 1001 }, good) }), 'keys'],
    ['keys missing', () => ({ keys: undefined }), 'keys'],
    ['keys not an array', () => ({ keys: good() }), 'keys'],
    ['migrationId missing', () => ({ migrationId: undefined }), 'migrationId'],
    ['migrationId 2 chars ("ab")', () => ({ migrationId: 'ab' }), 'migrationId'],
    ['migrationId 256 chars', () => ({ migrationId: 'm'.repeat(256) }), 'migrationId'],
    ['migrationId not a string', () => ({ migrationId: 42 }), 'migrationId'],
    ['apiId missing', () => ({ apiId: undefined }), 'apiId'],
    ['apiId 2 chars', () => ({ apiId: 'ab' }), 'apiId'],
    ['a key without hash', () => ({ keys: [good(), { name: 'no hash' }] }), 'hash'],
    ['a hash of 2 chars', () => ({ keys: [{ hash: 'ab' }] }), 'hash'],
    ['a hash of 256 chars', () => ({ keys: [{ hash: 'a'.repeat(256) }] }), 'hash'],
    ['a hash not a string', () => ({ keys: [{ hash: 7 }] }), 'hash'],
    ['a key field unknown', () => ({ keys: [{ ...good(), color: 'blue' }] }), 'color'],
    ['keys.createKey\'s prefix on a key', () => ({ keys: [{ ...good(), prefix: 'sk' }] }), 'prefix'],
    ['a key\'s name empty', () => ({ keys: [{ ...good(), name: '' }] }), 'name'],
    ['a key\'s externalId with a space', () => ({ keys: [{ ...good(), externalId: 'a b' }] }), 'externalId'],
    ['a key\'s expires -1', () => ({ keys: [{ ...good(), expires: -1 }] }), 'expires'],
    ['a key\'s enabled not a boolean', () => ({ keys: [{ ...good(), enabled: 'yes' }] }), 'enabled'],
    ['a key\'s credits without remaining', () => ({ keys: [{ ...good(), credits: {} }] }), 'credits'],
    ['a key\'s 51 ratelimits', () => ({ keys: [{ ...good(), ratelimits: Array.from({ length: 51 }, (_, i) => rl(`limit_${i}`)) }] }), 'ratelimits'],
    ['a key\'s role of 101 chars', () => ({ keys: [{ ...good(), roles: ['r'.repeat(101)] }] }), 'roles'],
    ['a key\'s permission with a space', () => ({ keys: [{ ...good(), permissions: ['a b'] }] }), 'permissions'],
    ['an unknown top-level field', () => ({ color: 'blue' }), 'color'],
  ];

  it.each(CASES)('%s → 400 with errors[]', async (_why, body, field) => {
    const res = await call(srv(), 'keys.migrateKeys', { migrationId: mig.sha256, apiId, keys: [good()], ...body() });
    expect400(res, field);
    expect(res.json.error.type).toMatch(/\/invalid_input$/);
  });

  it('exactly 1000 keys are accepted (the edge of 1001)', async () => {
    const id = await createApi(srv());
    const res = expectOk(await call(srv(), 'keys.migrateKeys', { migrationId: mig.sha256, apiId: id, keys: Array.from({ length: 1000 }, good) }));
    expect(res.migrated).toHaveLength(1000);
    expect(res.failed).toEqual([]);
  });
});

describe('keys.migrateKeys 400: a hash not of the migration\'s algorithm → location body.keys[i].hash', () => {
  const key = 'legacy_example_key';
  const hex = sha256Hex(key);
  const b64 = sha256Base64(key);
  const CASES: [MigrationAlgorithm, string, string][] = [
    ['sha256', '63 hex characters', hex.slice(1)],
    ['sha256', '65 hex characters', `${hex}a`],
    ['sha256', 'a non-hex character', `g${hex.slice(1)}`],
    ['sha256', 'the base64 digest', b64],
    ['sha256', 'hex with a 0x prefix', `0x${hex}`],
    ['sha256-base64', 'the hex digest', hex],
    ['sha256-base64', '42 characters', b64.slice(0, 42)],
    ['sha256-base64', 'a character outside base64', `!${b64.slice(1)}`],
    ['sha256-base64', 'base64 of 16 bytes', Buffer.alloc(16, 1).toString('base64')],
    ['github.com/seamapi/prefixed-api-key', 'the base64 digest', b64],
    ['github.com/seamapi/prefixed-api-key', 'the whole key instead of a hash', seamKey().key],
    ['github.com/seamapi/prefixed-api-key', '63 hex characters', hex.slice(1)],
  ];

  it.each(CASES)('%s: %s → 400 invalid_input at body.keys[1].hash', async (algorithm, _why, hash) => {
    const id = await createApi(srv());
    const first = algorithm === 'sha256-base64' ? { hash: sha256Base64(legacyKey()) } : good();
    const res = await call(srv(), 'keys.migrateKeys', { migrationId: mig[algorithm], apiId: id, keys: [first, { hash }] });
    const error = expectError(res, 400, 'invalid_input');
    expect(error.errors).toEqual([expect.objectContaining({ location: 'body.keys[1].hash' })]);
    expect(await listKeyIds(id)).toEqual([]);
  });

  it('a hash of the right shape for another algorithm only: sha256 hex is refused by a sha256-base64 migration and vice versa', async () => {
    const id = await createApi(srv());
    expectError(await call(srv(), 'keys.migrateKeys', { migrationId: mig['sha256-base64'], apiId: id, keys: [{ hash: hex }] }), 400, 'invalid_input');
    expectError(await call(srv(), 'keys.migrateKeys', { migrationId: mig.sha256, apiId: id, keys: [{ hash: b64 }] }), 400, 'invalid_input');
    expectOk(await call(srv(), 'keys.migrateKeys', { migrationId: mig['sha256-base64'], apiId: id, keys: [{ hash: b64 }] }));
    expectOk(await call(srv(), 'keys.migrateKeys', { migrationId: mig.sha256, apiId: id, keys: [{ hash: sha256Hex('other') }] }));
  });
});

describe('keys.migrateKeys 400: a key\'s field errors are located at body.keys[i]', () => {
  it.each([
    ['refill with unlimited credits', { credits: { remaining: null, refill: { interval: 'daily', amount: 5 } } }, 'body.keys[1].credits.refill'],
    ['a daily refill with refillDay', { credits: { remaining: 5, refill: { interval: 'daily', amount: 5, refillDay: 3 } } }, 'body.keys[1].credits.refill.refillDay'],
    ['duplicate ratelimit names', { ratelimits: [rl('same'), rl('other'), rl('same')] }, 'body.keys[1].ratelimits[2].name'],
    ['meta of 10241 bytes', { meta: { p: 'm'.repeat(10241 - JSON.stringify({ p: '' }).length) } }, 'body.keys[1].meta'],
  ])('%s → 400 at %s', async (_why, fields, location) => {
    const id = await createApi(srv());
    const res = await call(srv(), 'keys.migrateKeys', { migrationId: mig.sha256, apiId: id, keys: [good(), { ...good(), ...fields }] });
    const error = expectError(res, 400, 'invalid_input');
    expect(error.errors).toEqual([expect.objectContaining({ location })]);
    expect(await listKeyIds(id)).toEqual([]);
  });
});

describe('keys.migrateKeys 400: all or nothing', () => {
  it('the 3rd key has a bad field → 400 and none of the first two keys, nor their identity, permission or role, exists', async () => {
    const id = await createApi(srv());
    const stem = uniq('aon');
    const keys = [legacyKey(), legacyKey(), legacyKey()];
    const first = keys.slice(0, 2).map((k, i) => ({ hash: sha256Hex(k), name: `k${i}`, externalId: `${stem}.user`, permissions: [`${stem}.perm`], roles: [`${stem}_role`], credits: { remaining: 5 } }));
    const bad = { hash: sha256Hex(keys[2] as string), credits: { remaining: null, refill: { interval: 'daily', amount: 1 } } };
    const res = await call(srv(), 'keys.migrateKeys', { migrationId: mig.sha256, apiId: id, keys: [...first, bad] });
    expect(expectError(res, 400, 'invalid_input').errors).toEqual([expect.objectContaining({ location: 'body.keys[2].credits.refill' })]);

    expect(await listKeyIds(id)).toEqual([]);
    for (const k of keys) expect(await verify(srv(), k)).toEqual({ valid: false, code: 'NOT_FOUND' });
    expectError(await call(srv(), 'identities.getIdentity', { identity: `${stem}.user` }), 404, 'identity_not_found');
    expectError(await call(srv(), 'permissions.getPermission', { permission: `${stem}.perm` }), 404, 'permission_not_found');
    expectError(await call(srv(), 'permissions.getRole', { role: `${stem}_role` }), 404, 'role_not_found');

    // Nothing of the refused call stayed behind: the same keys migrate, none failed.
    const again = expectOk(await call(srv(), 'keys.migrateKeys', { migrationId: mig.sha256, apiId: id, keys: [...first, { hash: bad.hash }] }));
    expect(again.failed).toEqual([]);
    expect(again.migrated.map((m: { hash: string }) => m.hash)).toEqual(keys.map(sha256Hex));
    for (const [i, k] of keys.entries()) expect(await verify(srv(), k)).toMatchObject({ valid: true, code: 'VALID', keyId: again.migrated[i].keyId });
    expectOk(await call(srv(), 'identities.getIdentity', { identity: `${stem}.user` }));
    expectOk(await call(srv(), 'permissions.getRole', { role: `${stem}_role` }));
  });

  it('a bad hash in the last of 1000 keys → 400 at body.keys[999].hash and nothing written', async () => {
    const id = await createApi(srv());
    const keys = Array.from({ length: 1000 }, (_, i) => (i === 999 ? { hash: 'not-a-hash' } : good()));
    const res = await call(srv(), 'keys.migrateKeys', { migrationId: mig.sha256, apiId: id, keys });
    expect(expectError(res, 400, 'invalid_input').errors).toEqual([expect.objectContaining({ location: 'body.keys[999].hash' })]);
    expect(await listKeyIds(id)).toEqual([]);
  });

  it('a seam call refused at its 2nd key leaves the 1st unmigrated (verify with migrationId: NOT_FOUND)', async () => {
    const id = await createApi(srv());
    const seam = seamKey();
    const res = await call(srv(), 'keys.migrateKeys', { migrationId: mig['github.com/seamapi/prefixed-api-key'], apiId: id, keys: [{ hash: seam.hash }, { hash: seamKey().hash, ratelimits: [rl('dup'), rl('dup')] }] });
    expect(expectError(res, 400, 'invalid_input').errors).toEqual([expect.objectContaining({ location: 'body.keys[1].ratelimits[1].name' })]);
    expect(await verify(srv(), seam.key, { migrationId: mig['github.com/seamapi/prefixed-api-key'] })).toEqual({ valid: false, code: 'NOT_FOUND' });
    expect(await listKeyIds(id)).toEqual([]);
  });
});

// verifyKey takes Unkey's bound for the field (1-256 characters); any id in it is looked up (404 when unknown).
describe('keys.verifyKey {migrationId} 400', () => {
  it.each([
    ['0 chars', ''],
    ['257 chars', 'm'.repeat(257)],
  ])('a migrationId of %s → 400', async (_why, migrationId) => {
    expect400(await call(srv(), 'keys.verifyKey', { key: 'whatever', migrationId }), 'migrationId');
  });

  it.each([
    ['1 char', 'm'],
    ['256 chars', 'm'.repeat(256)],
  ])('a migrationId of %s is within bounds: an unknown one is 404 migration_not_found', async (_why, migrationId) => {
    expectError(await call(srv(), 'keys.verifyKey', { key: 'whatever', migrationId }), 404, 'migration_not_found');
  });
});
