import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, expectError, expectOk, rootKeyWith } from '../../helpers/server.js';

const srv = inProcessServer();

describe('permissions.deletePermission 403', () => {
  it('without rbac.*.delete_permission → 403 naming it, and the permission stays', async () => {
    expectOk(await call(srv(), 'permissions.createPermission', { name: 'n', slug: 'kept' }));
    const { key } = await rootKeyWith(srv(), ['rbac.*.read_permission', 'rbac.*.delete_role']);
    const error = expectError(await call(srv(), 'permissions.deletePermission', { permission: 'kept' }, { rootKey: key }), 403, 'insufficient_permissions');
    expect(error.detail).toContain('rbac.*.delete_permission');
    expectOk(await call(srv(), 'permissions.getPermission', { permission: 'kept' }));
  });
});
