// keys.removePermissions 403: update_key AND rbac.*.remove_permission_from_key.
import { beforeAll, describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, createApi } from '../../helpers/server.js';
import { expect403, getKey, newKey, rootKeys, type NewKey } from '../../helpers/keys.js';

const srv = inProcessServer();
let k: NewKey;
let rk: string[] = [];
beforeAll(async () => {
  k = await newKey(srv(), { permissions: ['rp403.a'] });
  const otherApi = await createApi(srv());
  rk = (await rootKeys(srv(), [
    ['apis.*.update_key', 'rbac.*.add_permission_to_key'],
    ['rbac.*.remove_permission_from_key', 'apis.*.read_key'],
    [`apis.${otherApi}.update_key`, 'rbac.*.remove_permission_from_key'],
  ])).keys;
});

describe('keys.removePermissions 403', () => {
  it('no rbac.*.remove_permission_from_key → 403 naming it', async () => {
    expect403(await call(srv(), 'keys.removePermissions', { keyId: k.keyId, permissions: ['rp403.a'] }, { rootKey: rk[0] }), 'remove_permission_from_key');
  });

  it('no update_key → 403', async () => {
    expect403(await call(srv(), 'keys.removePermissions', { keyId: k.keyId, permissions: ['rp403.a'] }, { rootKey: rk[1] }), 'update_key');
  });

  it("update_key of another API → 403; the permission stays", async () => {
    expect403(await call(srv(), 'keys.removePermissions', { keyId: k.keyId, permissions: ['rp403.a'] }, { rootKey: rk[2] }), `apis.${k.apiId}.update_key`);
    expect((await getKey(srv(), k.keyId)).permissions).toEqual(['rp403.a']);
  });
});
