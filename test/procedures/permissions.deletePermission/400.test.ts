import { describe, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, expectError } from '../../helpers/server.js';

const srv = inProcessServer();

describe('permissions.deletePermission 400', () => {
  it.each([
    ['missing permission', {}],
    ['empty permission', { permission: '' }],
    ['129 characters', { permission: 'p'.repeat(129) }],
    ['a space inside', { permission: 'a b' }],
    ['an unknown field', { permission: 'p', cascade: true }],
  ])('%s → invalid_input', async (_why, body) => {
    expectError(await call(srv(), 'permissions.deletePermission', body), 400, 'invalid_input');
  });

  it('100 characters is within bounds (→ 404)', async () => {
    expectError(await call(srv(), 'permissions.deletePermission', { permission: 'p'.repeat(128) }), 404, 'permission_not_found');
  });
});
