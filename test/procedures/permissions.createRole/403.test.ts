import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, expectError, expectOk, rootKeyWith } from '../../helpers/server.js';

const srv = inProcessServer();

describe('permissions.createRole 403', () => {
  it('without rbac.*.create_role → 403 naming it', async () => {
    const { key } = await rootKeyWith(srv(), ['rbac.*.read_role', 'rbac.*.add_permission_to_role', 'rbac.*.create_permission']);
    const error = expectError(await call(srv(), 'permissions.createRole', { name: 'r1' }, { rootKey: key }), 403, 'insufficient_permissions');
    expect(error.detail).toContain('rbac.*.create_role');
  });

  it('with permissions but without rbac.*.add_permission_to_role → 403; without permissions create_role is enough', async () => {
    const { key } = await rootKeyWith(srv(), ['rbac.*.create_role', 'rbac.*.create_permission']);
    const error = expectError(await call(srv(), 'permissions.createRole', { name: 'r2', permissions: ['x.y'] }, { rootKey: key }), 403, 'insufficient_permissions');
    expect(error.detail).toContain('rbac.*.add_permission_to_role');
    expectOk(await call(srv(), 'permissions.createRole', { name: 'r2', permissions: [] }, { rootKey: key }));
  });

  it('a new slug also needs rbac.*.create_permission; existing slugs do not; a refusal creates nothing', async () => {
    expectOk(await call(srv(), 'permissions.createPermission', { name: 'n', slug: 'already.there' }));
    const { key } = await rootKeyWith(srv(), ['rbac.*.create_role', 'rbac.*.add_permission_to_role']);
    const error = expectError(await call(srv(), 'permissions.createRole', { name: 'r3', permissions: ['already.there', 'brand.new'] }, { rootKey: key }), 403, 'insufficient_permissions');
    expect(error.detail).toContain('rbac.*.create_permission');
    expectError(await call(srv(), 'permissions.getRole', { role: 'r3' }), 404, 'role_not_found');
    expectError(await call(srv(), 'permissions.getPermission', { permission: 'brand.new' }), 404, 'permission_not_found');
    const data = expectOk(await call(srv(), 'permissions.createRole', { name: 'r3', permissions: ['already.there'] }, { rootKey: key }));
    expect(data.permissions.map((p: { slug: string }) => p.slug)).toEqual(['already.there']);
  });
});
