import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, expectError, expectOk, rootKeyWith } from '../../helpers/server.js';

const srv = inProcessServer();

describe('identities.deleteIdentity 403', () => {
  it('without delete_identity → 403 naming it, and the identity stays', async () => {
    expectOk(await call(srv(), 'identities.createIdentity', { externalId: 'durable' }));
    const { key } = await rootKeyWith(srv(), ['identities.*.read_identity', 'identities.*.update_identity']);
    const error = expectError(await call(srv(), 'identities.deleteIdentity', { identity: 'durable' }, { rootKey: key }), 403, 'insufficient_permissions');
    expect(error.detail).toContain('identities.*.delete_identity');
    expectOk(await call(srv(), 'identities.getIdentity', { identity: 'durable' }));
  });

  it('identities.<id>.delete_identity allows that identity only', async () => {
    const a = expectOk(await call(srv(), 'identities.createIdentity', { externalId: 'del-a' })).identityId as string;
    expectOk(await call(srv(), 'identities.createIdentity', { externalId: 'del-b' }));
    const { key } = await rootKeyWith(srv(), [`identities.${a}.delete_identity`]);
    expectError(await call(srv(), 'identities.deleteIdentity', { identity: 'del-b' }, { rootKey: key }), 403, 'insufficient_permissions');
    expectOk(await call(srv(), 'identities.deleteIdentity', { identity: 'del-a' }, { rootKey: key }));
  });
});
