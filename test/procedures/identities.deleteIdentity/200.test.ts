import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, createApi, expectError, expectOk } from '../../helpers/server.js';

const srv = inProcessServer();

describe('identities.deleteIdentity 200', () => {
  it('returns an empty success; the identity is gone by id and externalId; the externalId can be reused', async () => {
    const { identityId } = expectOk(await call(srv(), 'identities.createIdentity', { externalId: 'goner' }));
    const res = await call(srv(), 'identities.deleteIdentity', { identity: 'goner' });
    expect(expectOk(res)).toEqual({});
    for (const identity of [identityId as string, 'goner']) expectError(await call(srv(), 'identities.getIdentity', { identity }), 404, 'identity_not_found');
    expect(expectOk(await call(srv(), 'identities.listIdentities', { search: 'goner' }))).toEqual([]);
    expect(expectOk(await call(srv(), 'identities.createIdentity', { externalId: 'goner' })).identityId).not.toBe(identityId);
  });

  it('linked keys lose their identity (getKey, listKeys filter, verifyKey) but keep working', async () => {
    const apiId = await createApi(srv());
    const { identityId } = expectOk(await call(srv(), 'identities.createIdentity', { externalId: 'shared-user', meta: { plan: 'pro' } }));
    const k1 = expectOk(await call(srv(), 'keys.createKey', { apiId, externalId: 'shared-user' }));
    const k2 = expectOk(await call(srv(), 'keys.createKey', { apiId, externalId: 'shared-user' }));
    expect(expectOk(await call(srv(), 'keys.getKey', { keyId: k1.keyId })).identity.id).toBe(identityId);

    expectOk(await call(srv(), 'identities.deleteIdentity', { identity: identityId }));

    for (const k of [k1, k2]) {
      const got = expectOk(await call(srv(), 'keys.getKey', { keyId: k.keyId }));
      expect(got.identity).toBeUndefined();
      expect(got.externalId).toBeUndefined();
      const verified = expectOk(await call(srv(), 'keys.verifyKey', { key: k.key }));
      expect(verified.valid).toBe(true);
      expect(verified.identity).toBeUndefined();
    }
    expect(expectOk(await call(srv(), 'apis.listKeys', { apiId, externalId: 'shared-user' }))).toEqual([]);
    // A new identity with the same externalId is not linked to the old keys.
    expectOk(await call(srv(), 'identities.createIdentity', { externalId: 'shared-user' }));
    expect(expectOk(await call(srv(), 'keys.getKey', { keyId: k1.keyId })).identity).toBeUndefined();
  });
});
