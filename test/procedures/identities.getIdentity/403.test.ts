import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, expectError, expectOk, rootKeyWith } from '../../helpers/server.js';

const srv = inProcessServer();

describe('identities.getIdentity 403', () => {
  it('without any read_identity grant → 403 naming both forms, whether or not the identity exists', async () => {
    expectOk(await call(srv(), 'identities.createIdentity', { externalId: 'secret' }));
    const { key } = await rootKeyWith(srv(), ['identities.*.create_identity', 'rbac.*.read_role']);
    for (const identity of ['secret', 'no-such-identity']) {
      const error = expectError(await call(srv(), 'identities.getIdentity', { identity }, { rootKey: key }), 403, 'insufficient_permissions');
      expect(error.detail).toContain('identities.*.read_identity');
    }
  });

  it('read_identity for another identity only → 403 naming this identity', async () => {
    const mine = expectOk(await call(srv(), 'identities.createIdentity', { externalId: 'this-one' }));
    const other = expectOk(await call(srv(), 'identities.createIdentity', { externalId: 'other-one' }));
    const { key } = await rootKeyWith(srv(), [`identities.${other.identityId}.read_identity`]);
    const error = expectError(await call(srv(), 'identities.getIdentity', { identity: 'this-one' }, { rootKey: key }), 403, 'insufficient_permissions');
    expect(error.detail).toContain(`identities.${mine.identityId}.read_identity`);
  });
});
