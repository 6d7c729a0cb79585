import { describe, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, expectError } from '../../helpers/server.js';

const srv = inProcessServer();

describe('permissions.deleteRole 400', () => {
  it.each([
    ['missing role', {}],
    ['empty role', { role: '' }],
    ['129 characters', { role: 'r'.repeat(129) }],
    ['an array', { role: ['r'] }],
    ['an unknown field', { role: 'r', force: true }],
  ])('%s → invalid_input', async (_why, body) => {
    expectError(await call(srv(), 'permissions.deleteRole', body), 400, 'invalid_input');
  });

  it('100 characters is within bounds (→ 404)', async () => {
    expectError(await call(srv(), 'permissions.deleteRole', { role: 'r'.repeat(128) }), 404, 'role_not_found');
  });
});
