// keys.migrateKeys 403: root keys without apis.<apiId|*>.create_key (the api. alias too).
// The permission check comes first: a refused call writes nothing, even with an unknown
// migration.
import { beforeAll, describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, createApi, expectOk } from '../../helpers/server.js';
import { expect403, rootKeys, verify } from '../../helpers/keys.js';
import { legacyKey, newMigration, sha256Hex } from '../../helpers/migrations.js';

const srv = inProcessServer();
let apiId = '';
let otherApi = '';
let mig = '';
const rk: Record<string, string> = {};

beforeAll(async () => {
  apiId = await createApi(srv());
  otherApi = await createApi(srv());
  mig = newMigration(srv(), 'sha256');
  const grants: Record<string, string[]> = {
    verifyOnly: ['api.*.verify_key'],
    readOnly: ['apis.*.read_key', 'apis.*.read_api', 'apis.*.update_key'],
    otherApi: [`api.${otherApi}.create_key`],
    thisApi: [`apis.${apiId}.create_key`],
    alias: [`api.${apiId}.create_key`],
    anyApi: ['api.*.create_key'],
  };
  const { keys } = await rootKeys(srv(), Object.values(grants));
  Object.keys(grants).forEach((name, i) => (rk[name] = keys[i] as string));
});

const body = (key: string, over: Record<string, unknown> = {}) => ({ migrationId: mig, apiId, keys: [{ hash: sha256Hex(key) }], ...over });

describe('keys.migrateKeys 403', () => {
  it('a root key with only api.*.verify_key → 403 naming create_key; the key is not migrated', async () => {
    const key = legacyKey();
    expect403(await call(srv(), 'keys.migrateKeys', body(key), { rootKey: rk.verifyOnly }), 'create_key');
    expect(await verify(srv(), key)).toEqual({ valid: false, code: 'NOT_FOUND' });
  });

  it('a root key without any create_key (read / update) → 403', async () => {
    expect403(await call(srv(), 'keys.migrateKeys', body(legacyKey()), { rootKey: rk.readOnly }), 'create_key');
  });

  it('api.<otherApiId>.create_key → 403 naming apis.<apiId>.create_key; it migrates into its own API', async () => {
    const key = legacyKey();
    expect403(await call(srv(), 'keys.migrateKeys', body(key), { rootKey: rk.otherApi }), `apis.${apiId}.create_key`);
    expect(await verify(srv(), key)).toEqual({ valid: false, code: 'NOT_FOUND' });
    const res = expectOk(await call(srv(), 'keys.migrateKeys', body(key, { apiId: otherApi }), { rootKey: rk.otherApi }));
    expect(res).toEqual({ migrated: [{ hash: sha256Hex(key), keyId: expect.stringMatching(/^key_/) }], failed: [] });
  });

  it('the permission is checked before the migration: no create_key and an unknown migration → 403', async () => {
    expect403(await call(srv(), 'keys.migrateKeys', body(legacyKey(), { migrationId: 'mig_doesnotexist' }), { rootKey: rk.verifyOnly }), 'create_key');
  });

  it('apis.<apiId>.create_key, api.<apiId>.create_key and api.*.create_key are each enough', async () => {
    for (const name of ['thisApi', 'alias', 'anyApi']) {
      const key = legacyKey();
      const res = expectOk(await call(srv(), 'keys.migrateKeys', body(key), { rootKey: rk[name] }));
      expect(res.failed).toEqual([]);
      expect(await verify(srv(), key)).toMatchObject({ valid: true, code: 'VALID', keyId: res.migrated[0].keyId });
    }
  });

  it('the refused requests created no key', async () => {
    expect(expectOk(await call(srv(), 'apis.listKeys', { apiId }))).toHaveLength(3);
  });
});
