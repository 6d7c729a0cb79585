import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, createApi, expectError, expectOk, foreignRootKey } from '../../helpers/server.js';

const srv = inProcessServer();

describe('identities.createIdentity 200', () => {
  it('returns {identityId}; getIdentity shows meta and rate limits with ids', async () => {
    const data = expectOk(await call(srv(), 'identities.createIdentity', {
      externalId: 'user_1',
      meta: { plan: 'pro', nested: { a: [1, 2] } },
      ratelimits: [{ name: 'requests', limit: 10, duration: 1000 }, { name: 'tokens', limit: 500, duration: 60000, autoApply: true }],
    }));
    expect(data).toEqual({ identityId: expect.stringMatching(/^id_/) });
    expect(expectOk(await call(srv(), 'identities.getIdentity', { identity: data.identityId }))).toEqual({
      id: data.identityId,
      externalId: 'user_1',
      meta: { plan: 'pro', nested: { a: [1, 2] } },
      ratelimits: [
        { id: expect.stringMatching(/^rl_/), name: 'requests', limit: 10, duration: 1000, autoApply: false },
        { id: expect.stringMatching(/^rl_/), name: 'tokens', limit: 500, duration: 60000, autoApply: true },
      ],
    });
  });

  it('only externalId: no meta, no ratelimits in the identity', async () => {
    const { identityId } = expectOk(await call(srv(), 'identities.createIdentity', { externalId: 'bare' }));
    expect(expectOk(await call(srv(), 'identities.getIdentity', { identity: 'bare' }))).toEqual({ id: identityId, externalId: 'bare' });
  });

  it('bounds at their edges: externalId 1 and 255 characters of [a-zA-Z0-9_.-], 50 rate limits, empty meta', async () => {
    const ratelimits = Array.from({ length: 50 }, (_, i) => ({ name: `limit-${i}`, limit: 1, duration: 1000 }));
    for (const body of [{ externalId: 'x' }, { externalId: 'e'.repeat(255), meta: {}, ratelimits }, { externalId: 'aZ09_.-' }]) {
      expectOk(await call(srv(), 'identities.createIdentity', body));
    }
    expect(expectOk(await call(srv(), 'identities.getIdentity', { identity: 'e'.repeat(255) })).ratelimits).toHaveLength(50);
  });

  it('keys.createKey with an externalId creates the identity, which getIdentity then finds', async () => {
    const apiId = await createApi(srv());
    expectError(await call(srv(), 'identities.getIdentity', { identity: 'from-key' }), 404, 'identity_not_found');
    const { keyId } = expectOk(await call(srv(), 'keys.createKey', { apiId, externalId: 'from-key' }));
    const identity = expectOk(await call(srv(), 'identities.getIdentity', { identity: 'from-key' }));
    expect(identity).toEqual({ id: expect.stringMatching(/^id_/), externalId: 'from-key' });
    expect(expectOk(await call(srv(), 'keys.getKey', { keyId })).identity.id).toBe(identity.id);
    // And createKey reuses an identity created here.
    const { identityId } = expectOk(await call(srv(), 'identities.createIdentity', { externalId: 'pre-made', meta: { tier: 1 } }));
    const second = expectOk(await call(srv(), 'keys.createKey', { apiId, externalId: 'pre-made' }));
    expect(expectOk(await call(srv(), 'keys.getKey', { keyId: second.keyId })).identity).toEqual({ id: identityId, externalId: 'pre-made', meta: { tier: 1 } });
  });

  it('externalIds are unique per workspace only', async () => {
    const foreign = await foreignRootKey(srv());
    const mine = expectOk(await call(srv(), 'identities.createIdentity', { externalId: 'everywhere' }));
    const theirs = expectOk(await call(srv(), 'identities.createIdentity', { externalId: 'everywhere' }, { rootKey: foreign }));
    expect(theirs.identityId).not.toBe(mine.identityId);
  });
});
