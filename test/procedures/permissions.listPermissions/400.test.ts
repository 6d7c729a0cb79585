import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, expectError, expectOk } from '../../helpers/server.js';

const srv = inProcessServer();

describe('permissions.listPermissions 400', () => {
  it.each([
    ['limit 0', { limit: 0 }],
    ['limit 101', { limit: 101 }],
    ['limit 1.5', { limit: 1.5 }],
    ['cursor of 1025 characters', { cursor: 'c'.repeat(1025) }],
    ['search of 257 characters', { search: 's'.repeat(257) }],
    ['an unknown field', { offset: 3 }],
  ])('%s → invalid_input', async (_why, body) => {
    expectError(await call(srv(), 'permissions.listPermissions', body), 400, 'invalid_input');
  });

  it('the bounds at their edges are accepted', async () => {
    for (const body of [{ limit: 1 }, { limit: 100 }, { search: 's'.repeat(256) }, { cursor: '' }]) expectOk(await call(srv(), 'permissions.listPermissions', body));
  });

  it('a cursor not issued for this list → 400 invalid_cursor', async () => {
    expectError(await call(srv(), 'permissions.listPermissions', { cursor: 'not-a-cursor' }), 400, 'invalid_cursor');
    for (let i = 0; i < 3; i++) expectOk(await call(srv(), 'permissions.createPermission', { name: 'n', slug: `cursor.p${i}` }));
    const res = await call(srv(), 'permissions.listPermissions', { limit: 1 });
    const cursor = res.json.pagination.cursor as string;
    expect(typeof cursor).toBe('string');
    expectError(await call(srv(), 'permissions.listRoles', { cursor }), 400, 'invalid_cursor');
    expectError(await call(srv(), 'permissions.listPermissions', { cursor, search: 'other' }), 400, 'invalid_cursor');
  });
});
