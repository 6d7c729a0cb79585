import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, expectError, expectOk, rootKeyWith } from '../../helpers/server.js';

const srv = inProcessServer();

describe('permissions.createPermission 403', () => {
  it('without rbac.*.create_permission → 403 naming it, and nothing is created', async () => {
    const { key } = await rootKeyWith(srv(), ['rbac.*.read_permission', 'rbac.*.create_role']);
    const error = expectError(await call(srv(), 'permissions.createPermission', { name: 'n', slug: 'forbidden.slug' }, { rootKey: key }), 403, 'insufficient_permissions');
    expect(error.detail).toContain('rbac.*.create_permission');
    expectError(await call(srv(), 'permissions.getPermission', { permission: 'forbidden.slug' }), 404, 'permission_not_found');
  });

  it('rbac.*.create_permission (or rbac.*.*) is enough', async () => {
    for (const grant of ['rbac.*.create_permission', 'rbac.*.*']) {
      const { key } = await rootKeyWith(srv(), [grant]);
      expectOk(await call(srv(), 'permissions.createPermission', { name: 'n', slug: `allowed.${grant.replace(/\*/g, 'x')}` }, { rootKey: key }));
    }
  });
});
