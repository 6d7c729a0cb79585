import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, expectError, expectOk, rootKeyWith } from '../../helpers/server.js';

const srv = inProcessServer();

describe('identities.updateIdentity 403', () => {
  it('without update_identity → 403 naming it, and the identity is unchanged', async () => {
    expectOk(await call(srv(), 'identities.createIdentity', { externalId: 'locked', meta: { v: 1 } }));
    const { key } = await rootKeyWith(srv(), ['identities.*.read_identity', 'identities.*.create_identity']);
    const error = expectError(await call(srv(), 'identities.updateIdentity', { identity: 'locked', meta: { v: 2 } }, { rootKey: key }), 403, 'insufficient_permissions');
    expect(error.detail).toContain('identities.*.update_identity');
    expect(expectOk(await call(srv(), 'identities.getIdentity', { identity: 'locked' })).meta).toEqual({ v: 1 });
  });

  it('update_identity for another identity only → 403', async () => {
    expectOk(await call(srv(), 'identities.createIdentity', { externalId: 'target' }));
    const other = expectOk(await call(srv(), 'identities.createIdentity', { externalId: 'elsewhere' }));
    const { key } = await rootKeyWith(srv(), [`identities.${other.identityId}.update_identity`]);
    expectError(await call(srv(), 'identities.updateIdentity', { identity: 'target', meta: {} }, { rootKey: key }), 403, 'insufficient_permissions');
  });
});
