import { describe, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, expectError } from '../../helpers/server.js';

const srv = inProcessServer();

describe('identities.deleteIdentity 400', () => {
  it.each([
    ['missing identity', {}],
    ['empty identity', { identity: '' }],
    ['256 characters', { identity: 'i'.repeat(256) }],
    ['null', { identity: null }],
    ['an unknown field', { identity: 'x', permanent: true }],
  ])('%s → invalid_input', async (_why, body) => {
    expectError(await call(srv(), 'identities.deleteIdentity', body), 400, 'invalid_input');
  });

  it('255 characters is within bounds (→ 404)', async () => {
    expectError(await call(srv(), 'identities.deleteIdentity', { identity: 'i'.repeat(255) }), 404, 'identity_not_found');
  });
});
