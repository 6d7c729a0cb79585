import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, expectError } from '../../helpers/server.js';

const srv = inProcessServer();

describe('permissions.createPermission 400', () => {
  it.each([
    ['missing slug', { name: 'n' }, 'slug'],
    ['missing name', { slug: 's' }, 'name'],
    ['empty slug', { name: 'n', slug: '' }, 'slug'],
    ['slug of 129 characters', { name: 'n', slug: 's'.repeat(129) }, 'slug'],
    ['slug with a space', { name: 'n', slug: 'a b' }, 'slug'],
    ['slug with a slash', { name: 'n', slug: 'a/b' }, 'slug'],
    ['empty name', { name: '', slug: 's' }, 'name'],
    ['name of 513 characters', { name: 'n'.repeat(513), slug: 's' }, 'name'],
    ['description of 513 characters', { name: 'n', slug: 's', description: 'd'.repeat(513) }, 'description'],
    ['slug a number', { name: 'n', slug: 5 }, 'slug'],
    ['unknown field', { name: 'n', slug: 's', workspaceId: 'ws_x' }, 'workspaceId'],
  ])('%s → invalid_input naming the field', async (_why, body, field) => {
    const error = expectError(await call(srv(), 'permissions.createPermission', body), 400, 'invalid_input');
    expect(error.errors?.some((e) => e.location.includes(field))).toBe(true);
  });

  it('nothing was created by a rejected request', async () => {
    expectError(await call(srv(), 'permissions.createPermission', { name: 'n'.repeat(513), slug: 'never.created' }), 400, 'invalid_input');
    expectError(await call(srv(), 'permissions.getPermission', { permission: 'never.created' }), 404, 'permission_not_found');
  });
});
