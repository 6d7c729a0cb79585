import { describe, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, expectError } from '../../helpers/server.js';

const srv = inProcessServer();

describe('permissions.getRole 400', () => {
  it.each([
    ['missing role', {}],
    ['empty role', { role: '' }],
    ['129 characters', { role: 'r'.repeat(129) }],
    ['a number', { role: 7 }],
    ['an unknown field', { role: 'r', roleId: 'r' }],
  ])('%s → invalid_input', async (_why, body) => {
    expectError(await call(srv(), 'permissions.getRole', body), 400, 'invalid_input');
  });

  it('100 characters is within bounds (→ 404)', async () => {
    expectError(await call(srv(), 'permissions.getRole', { role: 'r'.repeat(128) }), 404, 'role_not_found');
  });
});
