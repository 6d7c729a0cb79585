import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, expectError, expectOk, rootKeyWith } from '../../helpers/server.js';

const srv = inProcessServer();

describe('permissions.getRole 403', () => {
  it('without rbac.*.read_role → 403 naming it', async () => {
    expectOk(await call(srv(), 'permissions.createRole', { name: 'hidden' }));
    const { key } = await rootKeyWith(srv(), ['rbac.*.read_permission', 'rbac.*.create_role']);
    const error = expectError(await call(srv(), 'permissions.getRole', { role: 'hidden' }, { rootKey: key }), 403, 'insufficient_permissions');
    expect(error.detail).toContain('rbac.*.read_role');
  });
});
