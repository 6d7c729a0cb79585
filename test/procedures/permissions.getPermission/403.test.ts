import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, expectError, rootKeyWith } from '../../helpers/server.js';

const srv = inProcessServer();

describe('permissions.getPermission 403', () => {
  it('without rbac.*.read_permission → 403 naming it, before any lookup', async () => {
    const { key } = await rootKeyWith(srv(), ['rbac.*.create_permission', 'rbac.*.read_role']);
    for (const permission of ['exists.here', 'does.not.exist']) {
      if (permission === 'exists.here') await call(srv(), 'permissions.createPermission', { name: 'n', slug: permission });
      const error = expectError(await call(srv(), 'permissions.getPermission', { permission }, { rootKey: key }), 403, 'insufficient_permissions');
      expect(error.detail).toContain('rbac.*.read_permission');
    }
  });
});
