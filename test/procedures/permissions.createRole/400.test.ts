import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, expectError } from '../../helpers/server.js';

const srv = inProcessServer();

describe('permissions.createRole 400', () => {
  it.each([
    ['missing name', {}, 'name'],
    ['empty name', { name: '' }, 'name'],
    ['name of 129 characters', { name: 'r'.repeat(129) }, 'name'],
    ['description of 513 characters', { name: 'r', description: 'd'.repeat(513) }, 'description'],
    ['permissions not an array', { name: 'r', permissions: 'a.b' }, 'permissions'],
    ['1001 permissions', { name: 'r', permissions: Array.from({ length: 1001 }, (_, i) => `p${i}`) }, 'permissions'],
    ['an empty slug', { name: 'r', permissions: [''] }, 'permissions'],
    ['a slug of 129 characters', { name: 'r', permissions: ['s'.repeat(129)] }, 'permissions'],
    ['a slug with a space', { name: 'r', permissions: ['a b'] }, 'permissions'],
    ['an unknown field', { name: 'r', roles: [] }, 'roles'],
  ])('%s → invalid_input naming the field', async (_why, body, field) => {
    const error = expectError(await call(srv(), 'permissions.createRole', body), 400, 'invalid_input');
    expect(error.errors?.some((e) => e.location.includes(field))).toBe(true);
  });

  it('nothing is created by a rejected request', async () => {
    expectError(await call(srv(), 'permissions.createRole', { name: 'never', permissions: ['ok.slug', 'bad slug'] }), 400, 'invalid_input');
    expectError(await call(srv(), 'permissions.getRole', { role: 'never' }), 404, 'role_not_found');
    expectError(await call(srv(), 'permissions.getPermission', { permission: 'ok.slug' }), 404, 'permission_not_found');
  });
});
