import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, expectError, expectOk } from '../../helpers/server.js';

const srv = inProcessServer();

describe('permissions.createRole 409', () => {
  it('a second role with the same name → 409 role_already_exists; nothing of the second request is kept', async () => {
    const first = expectOk(await call(srv(), 'permissions.createRole', { name: 'admin' }));
    const error = expectError(await call(srv(), 'permissions.createRole', { name: 'admin', permissions: ['from.second'] }), 409, 'role_already_exists');
    expect(error.detail).toContain('admin');
    expect(expectOk(await call(srv(), 'permissions.getRole', { role: 'admin' }))).toEqual({ id: first.roleId, name: 'admin' });
    expectError(await call(srv(), 'permissions.getPermission', { permission: 'from.second' }), 404, 'permission_not_found');
  });

  it('10 concurrent creates of one name → exactly one 200', async () => {
    const results = await Promise.all(Array.from({ length: 10 }, () => call(srv(), 'permissions.createRole', { name: 'racing-role' })));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 409)).toHaveLength(9);
  });
});
