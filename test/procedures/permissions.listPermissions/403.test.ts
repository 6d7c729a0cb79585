import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, expectError, expectOk, rootKeyWith } from '../../helpers/server.js';

const srv = inProcessServer();

describe('permissions.listPermissions 403', () => {
  it('without rbac.*.read_permission → 403 naming it; with it → 200', async () => {
    const denied = await rootKeyWith(srv(), ['rbac.*.read_role', 'rbac.*.create_permission']);
    const error = expectError(await call(srv(), 'permissions.listPermissions', {}, { rootKey: denied.key }), 403, 'insufficient_permissions');
    expect(error.detail).toContain('rbac.*.read_permission');
    const allowed = await rootKeyWith(srv(), ['rbac.*.read_permission']);
    expectOk(await call(srv(), 'permissions.listPermissions', {}, { rootKey: allowed.key }));
  });
});
