// keys.setPermissions 403: update_key AND add_permission_to_key AND remove_permission_from_key;
// new slugs also need create_permission.
import { beforeAll, describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, createApi } from '../../helpers/server.js';
import { expect403, getKey, newKey, rootKeys, type NewKey } from '../../helpers/keys.js';

const srv = inProcessServer();
let k: NewKey;
let rk: string[] = [];
beforeAll(async () => {
  k = await newKey(srv(), { permissions: ['sp403.a'] });
  const otherApi = await createApi(srv());
  rk = (await rootKeys(srv(), [
    ['apis.*.update_key', 'rbac.*.add_permission_to_key', 'rbac.*.create_permission'],
    ['apis.*.update_key', 'rbac.*.remove_permission_from_key', 'rbac.*.create_permission'],
    ['apis.*.update_key', 'rbac.*.add_permission_to_key', 'rbac.*.remove_permission_from_key'],
    ['rbac.*.add_permission_to_key', 'rbac.*.remove_permission_from_key', 'rbac.*.create_permission'],
    [`apis.${otherApi}.update_key`, 'rbac.*.add_permission_to_key', 'rbac.*.remove_permission_from_key'],
  ])).keys;
});

describe('keys.setPermissions 403', () => {
  it.each([
    ['no remove_permission_from_key', 0, 'remove_permission_from_key'],
    ['no add_permission_to_key', 1, 'add_permission_to_key'],
    ['no update_key', 3, 'update_key'],
  ])('%s → 403', async (_why, i, missing) => {
    expect403(await call(srv(), 'keys.setPermissions', { keyId: k.keyId, permissions: [] }, { rootKey: rk[i] }), missing);
  });

  it('a new slug without create_permission → 403', async () => {
    expect403(await call(srv(), 'keys.setPermissions', { keyId: k.keyId, permissions: ['sp403.brand.new'] }, { rootKey: rk[2] }), 'create_permission');
  });

  it("update_key of another API → 403; permissions unchanged", async () => {
    expect403(await call(srv(), 'keys.setPermissions', { keyId: k.keyId, permissions: [] }, { rootKey: rk[4] }), `apis.${k.apiId}.update_key`);
    expect((await getKey(srv(), k.keyId)).permissions).toEqual(['sp403.a']);
  });
});
