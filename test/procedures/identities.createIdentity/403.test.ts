import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, expectError, expectOk, rootKeyWith } from '../../helpers/server.js';

const srv = inProcessServer();

describe('identities.createIdentity 403', () => {
  it('without identities.*.create_identity → 403 naming it, and nothing is created', async () => {
    const { key } = await rootKeyWith(srv(), ['identities.*.read_identity', 'apis.*.create_key']);
    const error = expectError(await call(srv(), 'identities.createIdentity', { externalId: 'nope' }, { rootKey: key }), 403, 'insufficient_permissions');
    expect(error.detail).toContain('identities.*.create_identity');
    expectError(await call(srv(), 'identities.getIdentity', { identity: 'nope' }), 404, 'identity_not_found');
  });

  it("Unkey's alias identity.*.create_identity is accepted", async () => {
    const { key } = await rootKeyWith(srv(), ['identity.*.create_identity']);
    expectOk(await call(srv(), 'identities.createIdentity', { externalId: 'via-alias' }, { rootKey: key }));
  });
});
