import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, expectOk, rootKeyWith } from '../../helpers/server.js';

const srv = inProcessServer();

describe('identities.getIdentity 200', () => {
  it('finds an identity by id and by externalId', async () => {
    const { identityId } = expectOk(await call(srv(), 'identities.createIdentity', { externalId: 'lookup', meta: { a: 1 } }));
    const expected = { id: identityId, externalId: 'lookup', meta: { a: 1 } };
    expect(expectOk(await call(srv(), 'identities.getIdentity', { identity: identityId }))).toEqual(expected);
    expect(expectOk(await call(srv(), 'identities.getIdentity', { identity: 'lookup' }))).toEqual(expected);
  });

  it('an externalId that looks like an identity id still resolves', async () => {
    const { identityId } = expectOk(await call(srv(), 'identities.createIdentity', { externalId: 'id_not_really' }));
    expect(expectOk(await call(srv(), 'identities.getIdentity', { identity: 'id_not_really' })).id).toBe(identityId);
  });

  it('identities.*.read_identity, or identities.<id>.read_identity for that identity, is enough', async () => {
    const { identityId } = expectOk(await call(srv(), 'identities.createIdentity', { externalId: 'scoped' }));
    for (const grant of ['identities.*.read_identity', `identities.${identityId}.read_identity`, `identity.${identityId}.read_identity`]) {
      const { key } = await rootKeyWith(srv(), [grant]);
      expect(expectOk(await call(srv(), 'identities.getIdentity', { identity: 'scoped' }, { rootKey: key })).id).toBe(identityId);
    }
  });
});
