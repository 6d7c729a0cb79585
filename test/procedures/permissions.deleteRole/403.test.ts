import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, expectError, expectOk, rootKeyWith } from '../../helpers/server.js';

const srv = inProcessServer();

describe('permissions.deleteRole 403', () => {
  it('without rbac.*.delete_role → 403 naming it, and the role stays', async () => {
    expectOk(await call(srv(), 'permissions.createRole', { name: 'staying' }));
    const { key } = await rootKeyWith(srv(), ['rbac.*.read_role', 'rbac.*.delete_permission']);
    const error = expectError(await call(srv(), 'permissions.deleteRole', { role: 'staying' }, { rootKey: key }), 403, 'insufficient_permissions');
    expect(error.detail).toContain('rbac.*.delete_role');
    expectOk(await call(srv(), 'permissions.getRole', { role: 'staying' }));
  });
});
