import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, createApi, expectOk, rootKeyWith } from '../../helpers/server.js';

const srv = inProcessServer();

describe('identities.updateIdentity 200', () => {
  it('meta replaces, null clears, omitted keeps; returns the identity', async () => {
    const { identityId } = expectOk(await call(srv(), 'identities.createIdentity', { externalId: 'upd', meta: { a: 1, b: 2 } }));
    expect(expectOk(await call(srv(), 'identities.updateIdentity', { identity: 'upd', meta: { c: 3 } }))).toEqual({ id: identityId, externalId: 'upd', meta: { c: 3 } });
    expect(expectOk(await call(srv(), 'identities.updateIdentity', { identity: identityId }))).toEqual({ id: identityId, externalId: 'upd', meta: { c: 3 } });
    expect(expectOk(await call(srv(), 'identities.updateIdentity', { identity: identityId, meta: null }))).toEqual({ id: identityId, externalId: 'upd' });
    expect(expectOk(await call(srv(), 'identities.getIdentity', { identity: identityId }))).toEqual({ id: identityId, externalId: 'upd' });
  });

  it('ratelimits replace the set: same names keep their ids, unlisted ones go, new ones get ids; [] clears', async () => {
    expectOk(await call(srv(), 'identities.createIdentity', { externalId: 'limits', meta: { keep: true }, ratelimits: [{ name: 'aaa', limit: 1, duration: 1000 }, { name: 'bbb', limit: 2, duration: 2000 }] }));
    const before = expectOk(await call(srv(), 'identities.getIdentity', { identity: 'limits' })).ratelimits as { id: string; name: string }[];
    const after = expectOk(await call(srv(), 'identities.updateIdentity', { identity: 'limits', ratelimits: [{ name: 'bbb', limit: 20, duration: 3000, autoApply: true }, { name: 'ccc', limit: 3, duration: 1000 }] }));
    expect(after.meta).toEqual({ keep: true });
    expect(after.ratelimits).toEqual([
      { id: before.find((r) => r.name === 'bbb')?.id, name: 'bbb', limit: 20, duration: 3000, autoApply: true },
      { id: expect.stringMatching(/^rl_/), name: 'ccc', limit: 3, duration: 1000, autoApply: false },
    ]);
    expect(after.ratelimits[1].id).not.toBe(before.find((r) => r.name === 'aaa')?.id);
    expect(expectOk(await call(srv(), 'identities.updateIdentity', { identity: 'limits', ratelimits: [] })).ratelimits).toBeUndefined();
  });

  it('linked keys see the new meta at once', async () => {
    const apiId = await createApi(srv());
    const { keyId } = expectOk(await call(srv(), 'keys.createKey', { apiId, externalId: 'linked' }));
    expectOk(await call(srv(), 'identities.updateIdentity', { identity: 'linked', meta: { tier: 'gold' } }));
    expect(expectOk(await call(srv(), 'keys.getKey', { keyId })).identity.meta).toEqual({ tier: 'gold' });
  });

  it('identities.<id>.update_identity is enough for that identity', async () => {
    const { identityId } = expectOk(await call(srv(), 'identities.createIdentity', { externalId: 'scoped-update' }));
    const { key } = await rootKeyWith(srv(), [`identities.${identityId}.update_identity`]);
    expect(expectOk(await call(srv(), 'identities.updateIdentity', { identity: 'scoped-update', meta: { x: 1 } }, { rootKey: key })).meta).toEqual({ x: 1 });
  });
});
