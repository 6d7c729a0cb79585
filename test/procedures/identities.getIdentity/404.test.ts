import { describe, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, expectError, expectOk, foreignRootKey } from '../../helpers/server.js';

const srv = inProcessServer();

describe('identities.getIdentity 404', () => {
  it('an unknown id or externalId → 404 identity_not_found', async () => {
    for (const identity of ['id_1111111111111111111111', 'nobody']) expectError(await call(srv(), 'identities.getIdentity', { identity }), 404, 'identity_not_found');
  });

  it("another workspace's identity is not found, by id or externalId", async () => {
    const { identityId } = expectOk(await call(srv(), 'identities.createIdentity', { externalId: 'private-identity' }));
    const foreign = await foreignRootKey(srv());
    for (const identity of [identityId as string, 'private-identity']) expectError(await call(srv(), 'identities.getIdentity', { identity }, { rootKey: foreign }), 404, 'identity_not_found');
  });
});
