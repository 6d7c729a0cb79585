import { describe, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, expectError, expectOk, foreignRootKey } from '../../helpers/server.js';

const srv = inProcessServer();

describe('identities.deleteIdentity 404', () => {
  it('unknown → 404; deleting twice → 404 the second time', async () => {
    expectError(await call(srv(), 'identities.deleteIdentity', { identity: 'phantom' }), 404, 'identity_not_found');
    expectOk(await call(srv(), 'identities.createIdentity', { externalId: 'one-shot' }));
    expectOk(await call(srv(), 'identities.deleteIdentity', { identity: 'one-shot' }));
    expectError(await call(srv(), 'identities.deleteIdentity', { identity: 'one-shot' }), 404, 'identity_not_found');
  });

  it("another workspace cannot delete this workspace's identity", async () => {
    const { identityId } = expectOk(await call(srv(), 'identities.createIdentity', { externalId: 'protected' }));
    const foreign = await foreignRootKey(srv());
    for (const identity of [identityId as string, 'protected']) expectError(await call(srv(), 'identities.deleteIdentity', { identity }, { rootKey: foreign }), 404, 'identity_not_found');
    expectOk(await call(srv(), 'identities.getIdentity', { identity: identityId }));
  });
});
