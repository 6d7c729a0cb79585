import { describe, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, expectError, expectOk, foreignRootKey } from '../../helpers/server.js';

const srv = inProcessServer();

describe('identities.updateIdentity 404', () => {
  it('unknown → 404 identity_not_found (an update never creates)', async () => {
    expectError(await call(srv(), 'identities.updateIdentity', { identity: 'missing', meta: { a: 1 } }), 404, 'identity_not_found');
    expectError(await call(srv(), 'identities.getIdentity', { identity: 'missing' }), 404, 'identity_not_found');
  });

  it("another workspace's identity → 404", async () => {
    const { identityId } = expectOk(await call(srv(), 'identities.createIdentity', { externalId: 'not-yours' }));
    const foreign = await foreignRootKey(srv());
    for (const identity of [identityId as string, 'not-yours']) expectError(await call(srv(), 'identities.updateIdentity', { identity, meta: {} }, { rootKey: foreign }), 404, 'identity_not_found');
  });
});
