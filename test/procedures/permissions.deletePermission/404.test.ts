import { describe, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, expectError, expectOk, foreignRootKey } from '../../helpers/server.js';

const srv = inProcessServer();

describe('permissions.deletePermission 404', () => {
  it('unknown → 404; deleting twice → 404 the second time', async () => {
    expectError(await call(srv(), 'permissions.deletePermission', { permission: 'never.was' }), 404, 'permission_not_found');
    expectOk(await call(srv(), 'permissions.createPermission', { name: 'n', slug: 'twice' }));
    expectOk(await call(srv(), 'permissions.deletePermission', { permission: 'twice' }));
    expectError(await call(srv(), 'permissions.deletePermission', { permission: 'twice' }), 404, 'permission_not_found');
  });

  it("another workspace cannot delete this workspace's permission", async () => {
    const { permissionId } = expectOk(await call(srv(), 'permissions.createPermission', { name: 'n', slug: 'mine.only' }));
    const foreign = await foreignRootKey(srv());
    expectError(await call(srv(), 'permissions.deletePermission', { permission: permissionId }, { rootKey: foreign }), 404, 'permission_not_found');
    expectError(await call(srv(), 'permissions.deletePermission', { permission: 'mine.only' }, { rootKey: foreign }), 404, 'permission_not_found');
    expectOk(await call(srv(), 'permissions.getPermission', { permission: permissionId }));
  });
});
