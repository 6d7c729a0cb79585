// keys.addRoles 403: needs update_key on the key's API AND rbac.*.add_role_to_key.
import { beforeAll, describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, createApi } from '../../helpers/server.js';
import { expect403, getKey, newKey, newRole, rootKeys, type NewKey } from '../../helpers/keys.js';

const srv = inProcessServer();
let k: NewKey;
let role = '';
let rk: string[] = [];
beforeAll(async () => {
  k = await newKey(srv());
  role = await newRole(srv());
  const otherApi = await createApi(srv());
  rk = (await rootKeys(srv(), [
    ['apis.*.update_key'],
    ['rbac.*.add_role_to_key', 'apis.*.read_key'],
    ['rbac.*.add_role_to_key', `apis.${otherApi}.update_key`],
  ])).keys;
});

describe('keys.addRoles 403', () => {
  it('update_key without rbac.*.add_role_to_key → 403 naming it', async () => {
    expect403(await call(srv(), 'keys.addRoles', { keyId: k.keyId, roles: [role] }, { rootKey: rk[0] }), 'rbac.*.add_role_to_key');
  });

  it('add_role_to_key without update_key → 403 naming update_key', async () => {
    expect403(await call(srv(), 'keys.addRoles', { keyId: k.keyId, roles: [role] }, { rootKey: rk[1] }), 'update_key');
  });

  it("update_key of another API → 403 for this API's key; no role added", async () => {
    expect403(await call(srv(), 'keys.addRoles', { keyId: k.keyId, roles: [role] }, { rootKey: rk[2] }), `apis.${k.apiId}.update_key`);
    expect(await getKey(srv(), k.keyId)).not.toHaveProperty('roles');
  });
});
