import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, expectError } from '../../helpers/server.js';

const srv = inProcessServer();

describe('permissions.getPermission 400', () => {
  it.each([
    ['missing permission', {}],
    ['empty permission', { permission: '' }],
    ['129 characters', { permission: 'p'.repeat(129) }],
    ['a character outside the slug alphabet', { permission: 'a b' }],
    ['a number', { permission: 1 }],
    ['an unknown field', { permission: 'p', slug: 'p' }],
  ])('%s → invalid_input', async (_why, body) => {
    const error = expectError(await call(srv(), 'permissions.getPermission', body), 400, 'invalid_input');
    expect(error.errors?.length).toBeGreaterThan(0);
  });

  it('100 characters is within bounds (→ 404, not 400)', async () => {
    expectError(await call(srv(), 'permissions.getPermission', { permission: 'p'.repeat(128) }), 404, 'permission_not_found');
  });
});
