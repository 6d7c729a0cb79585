// keys.addPermissions 403: update_key AND rbac.*.add_permission_to_key; a new slug also needs
// rbac.*.create_permission.
import { beforeAll, describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, createApi, expectError } from '../../helpers/server.js';
import { expect403, getKey, newKey, rootKeys, type NewKey } from '../../helpers/keys.js';

const srv = inProcessServer();
let k: NewKey;
let rk: string[] = [];
beforeAll(async () => {
  k = await newKey(srv());
  const otherApi = await createApi(srv());
  rk = (await rootKeys(srv(), [
    ['apis.*.update_key', 'rbac.*.create_permission'],
    ['rbac.*.add_permission_to_key', 'rbac.*.create_permission', 'apis.*.read_key'],
    ['apis.*.update_key', 'rbac.*.add_permission_to_key'],
    [`apis.${otherApi}.update_key`, 'rbac.*.add_permission_to_key', 'rbac.*.create_permission'],
  ])).keys;
});

describe('keys.addPermissions 403', () => {
  it('no rbac.*.add_permission_to_key → 403 naming it', async () => {
    expect403(await call(srv(), 'keys.addPermissions', { keyId: k.keyId, permissions: ['x.a'] }, { rootKey: rk[0] }), 'rbac.*.add_permission_to_key');
  });

  it('no update_key → 403 naming update_key', async () => {
    expect403(await call(srv(), 'keys.addPermissions', { keyId: k.keyId, permissions: ['x.a'] }, { rootKey: rk[1] }), 'update_key');
  });

  it('a new slug without rbac.*.create_permission → 403 naming it; nothing created or added', async () => {
    expect403(await call(srv(), 'keys.addPermissions', { keyId: k.keyId, permissions: ['never.created.403'] }, { rootKey: rk[2] }), 'create_permission');
    expectError(await call(srv(), 'permissions.getPermission', { permission: 'never.created.403' }), 404);
    expect(await getKey(srv(), k.keyId)).not.toHaveProperty('permissions');
  });

  it("update_key of another API → 403 for this API's key", async () => {
    expect403(await call(srv(), 'keys.addPermissions', { keyId: k.keyId, permissions: ['x.a'] }, { rootKey: rk[3] }), `apis.${k.apiId}.update_key`);
    expect(await getKey(srv(), k.keyId)).not.toHaveProperty('permissions');
  });
});
