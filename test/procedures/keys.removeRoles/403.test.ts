// keys.removeRoles 403: update_key missing or for another API.
import { beforeAll, describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, createApi } from '../../helpers/server.js';
import { expect403, getKey, newKey, newRole, rootKeys, type NewKey } from '../../helpers/keys.js';

const srv = inProcessServer();
let k: NewKey;
let role = '';
let rk: string[] = [];
beforeAll(async () => {
  role = await newRole(srv());
  k = await newKey(srv(), { roles: [role] });
  const otherApi = await createApi(srv());
  rk = (await rootKeys(srv(), [['rbac.*.add_role_to_key', 'rbac.*.remove_permission_from_key', 'apis.*.read_key'], [`apis.${otherApi}.update_key`]])).keys;
});

describe('keys.removeRoles 403', () => {
  it('no update_key → 403', async () => {
    expect403(await call(srv(), 'keys.removeRoles', { keyId: k.keyId, roles: [role] }, { rootKey: rk[0] }), 'update_key');
  });

  it("update_key of another API → 403; the role stays", async () => {
    expect403(await call(srv(), 'keys.removeRoles', { keyId: k.keyId, roles: [role] }, { rootKey: rk[1] }), `apis.${k.apiId}.update_key`);
    expect((await getKey(srv(), k.keyId)).roles).toEqual([role]);
  });
});
