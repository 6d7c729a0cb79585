import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, expectError, expectOk } from '../../helpers/server.js';

const srv = inProcessServer();

describe('permissions.setRolePermissions 400', () => {
  it.each([
    ['missing roleId', { permissions: [] }, 'roleId'],
    ['missing permissions', { roleId: 'rol' }, 'permissions'],
    ['empty roleId', { roleId: '', permissions: [] }, 'roleId'],
    ['roleId of 2 characters', { roleId: 'ab', permissions: [] }, 'roleId'],
    ['roleId of 256 characters', { roleId: 'r'.repeat(256), permissions: [] }, 'roleId'],
    ['roleId with a space', { roleId: 'my role', permissions: [] }, 'roleId'],
    ['1001 permissions', { roleId: 'rol', permissions: Array.from({ length: 1001 }, (_, i) => `p${i}`) }, 'permissions'],
    ['a slug of 129 characters', { roleId: 'rol', permissions: ['s'.repeat(129)] }, 'permissions'],
    ['a slug with a slash', { roleId: 'rol', permissions: ['a/b'] }, 'permissions'],
    ['an unknown field', { roleId: 'rol', permissions: [], role: 'r' }, 'role'],
  ])('%s → invalid_input naming the field', async (_why, body, field) => {
    const error = expectError(await call(srv(), 'permissions.setRolePermissions', body), 400, 'invalid_input');
    expect(error.errors?.some((e) => e.location.includes(field))).toBe(true);
  });

  it('a roleId of 255 characters is not found (404), not refused', async () => {
    expectError(await call(srv(), 'permissions.setRolePermissions', { roleId: 'r'.repeat(255), permissions: [] }), 404);
  });

  it('the bounds at their edges are accepted: 1000 permissions of 100 characters', async () => {
    expectOk(await call(srv(), 'permissions.createRole', { name: 'r'.repeat(128) }));
    const permissions = Array.from({ length: 1000 }, (_, i) => `${i}.`.padEnd(100, 'x'));
    expect(expectOk(await call(srv(), 'permissions.setRolePermissions', { roleId: 'r'.repeat(128), permissions }))).toHaveLength(1000);
  });
});
