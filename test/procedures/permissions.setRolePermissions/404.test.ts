import { describe, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, expectError, expectOk, foreignRootKey } from '../../helpers/server.js';

const srv = inProcessServer();

describe('permissions.setRolePermissions 404', () => {
  it('an unknown role → 404 role_not_found, and no permission is created', async () => {
    expectError(await call(srv(), 'permissions.setRolePermissions', { roleId: 'role_1111111111111111111111', permissions: ['nf.new'] }), 404, 'role_not_found');
    expectError(await call(srv(), 'permissions.getPermission', { permission: 'nf.new' }), 404, 'permission_not_found');
  });

  it("another workspace's role → 404", async () => {
    const { roleId } = expectOk(await call(srv(), 'permissions.createRole', { name: 'theirs' }));
    const foreign = await foreignRootKey(srv());
    expectError(await call(srv(), 'permissions.setRolePermissions', { roleId, permissions: [] }, { rootKey: foreign }), 404, 'role_not_found');
  });
});
