import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, expectError, expectOk, rootKeyWith } from '../../helpers/server.js';

const srv = inProcessServer();

describe('permissions.setRolePermissions 403', () => {
  it('needs both add_permission_to_role and remove_permission_from_role', async () => {
    expectOk(await call(srv(), 'permissions.createRole', { name: 'guarded', permissions: ['g.one'] }));
    for (const [grant, missing] of [['rbac.*.add_permission_to_role', 'remove_permission_from_role'], ['rbac.*.remove_permission_from_role', 'add_permission_to_role']] as const) {
      const { key } = await rootKeyWith(srv(), [grant, 'rbac.*.create_permission']);
      const error = expectError(await call(srv(), 'permissions.setRolePermissions', { roleId: 'guarded', permissions: [] }, { rootKey: key }), 403, 'insufficient_permissions');
      expect(error.detail).toContain(`rbac.*.${missing}`);
    }
    expect(expectOk(await call(srv(), 'permissions.getRole', { role: 'guarded' })).permissions).toHaveLength(1);
  });

  it('a new slug also needs rbac.*.create_permission; a refusal changes nothing', async () => {
    expectOk(await call(srv(), 'permissions.createRole', { name: 'growing', permissions: ['gr.one'] }));
    const { key } = await rootKeyWith(srv(), ['rbac.*.add_permission_to_role', 'rbac.*.remove_permission_from_role']);
    const error = expectError(await call(srv(), 'permissions.setRolePermissions', { roleId: 'growing', permissions: ['gr.two'] }, { rootKey: key }), 403, 'insufficient_permissions');
    expect(error.detail).toContain('rbac.*.create_permission');
    expectError(await call(srv(), 'permissions.getPermission', { permission: 'gr.two' }), 404, 'permission_not_found');
    expect(expectOk(await call(srv(), 'permissions.getRole', { role: 'growing' })).permissions.map((p: { slug: string }) => p.slug)).toEqual(['gr.one']);
    expectOk(await call(srv(), 'permissions.createPermission', { name: 'two', slug: 'gr.two' }));
    expect(expectOk(await call(srv(), 'permissions.setRolePermissions', { roleId: 'growing', permissions: ['gr.two'] }, { rootKey: key }))).toHaveLength(1);
  });
});
