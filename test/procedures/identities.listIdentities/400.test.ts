import { describe, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, expectError, expectOk } from '../../helpers/server.js';

const srv = inProcessServer();

describe('identities.listIdentities 400', () => {
  it.each([
    ['limit 0', { limit: 0 }],
    ['limit 101', { limit: 101 }],
    ['cursor of 1025 characters', { cursor: 'c'.repeat(1025) }],
    ['search of 257 characters', { search: 's'.repeat(257) }],
    ['an unknown field', { externalId: 'x' }],
  ])('%s → invalid_input', async (_why, body) => {
    expectError(await call(srv(), 'identities.listIdentities', body), 400, 'invalid_input');
  });

  it('the bounds at their edges are accepted; a foreign cursor is invalid_cursor', async () => {
    for (const body of [{ limit: 1 }, { limit: 100 }, { search: 's'.repeat(256) }, { cursor: '' }]) expectOk(await call(srv(), 'identities.listIdentities', body));
    for (let i = 0; i < 2; i++) expectOk(await call(srv(), 'identities.createIdentity', { externalId: `c-${i}` }));
    const cursor = (await call(srv(), 'identities.listIdentities', { limit: 1 })).json.pagination.cursor as string;
    expectError(await call(srv(), 'permissions.listPermissions', { cursor }), 400, 'invalid_cursor');
    expectError(await call(srv(), 'identities.listIdentities', { cursor: 'bogus' }), 400, 'invalid_cursor');
  });
});
