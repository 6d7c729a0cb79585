import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, createApi, expectError, expectOk } from '../../helpers/server.js';

const srv = inProcessServer();

describe('keys.verifyKey 412', () => {
  it('naming a limit the key and its identity do not have → 412 precondition_failed naming it, nothing consumed', async () => {
    const apiId = await createApi(srv());
    const { key, keyId } = expectOk(await call(srv(), 'keys.createKey', {
      apiId,
      externalId: 'user_412',
      credits: { remaining: 5 },
      ratelimits: [{ name: 'base', limit: 1, duration: 60_000, autoApply: true }],
    })) as { key: string; keyId: string };
    const error = expectError(await call(srv(), 'keys.verifyKey', { key, ratelimits: [{ name: 'missing_limit' }] }), 412, 'precondition_failed');
    expect(error.title).toBe('Precondition Failed');
    expect(error.detail).toContain('missing_limit');
    expectError(await call(srv(), 'keys.verifyKey', { key, ratelimits: [{ name: 'base' }, { name: 'missing_limit', cost: 0 }] }), 412, 'precondition_failed');
    expect(expectOk(await call(srv(), 'keys.getKey', { keyId })).credits.remaining).toBe(5);
    // The limit of 1 was not consumed by the refused requests.
    expect(expectOk(await call(srv(), 'keys.verifyKey', { key }))).toMatchObject({ code: 'VALID', credits: 4 });
  });

  it('a limit of the identity is known (no 412)', async () => {
    const apiId = await createApi(srv());
    expectOk(await call(srv(), 'identities.createIdentity', { externalId: 'ident_412', ratelimits: [{ name: 'per_user', limit: 5, duration: 60_000, autoApply: false }] }));
    const { key } = expectOk(await call(srv(), 'keys.createKey', { apiId, externalId: 'ident_412' })) as { key: string };
    expect(expectOk(await call(srv(), 'keys.verifyKey', { key, ratelimits: [{ name: 'per_user', cost: 2 }] }))).toMatchObject({ code: 'VALID' });
  });

  it('an unknown key naming an unknown limit is NOT_FOUND (200), not 412', async () => {
    const res = await call(srv(), 'keys.verifyKey', { key: 'unknown_key_412', ratelimits: [{ name: 'xyz' }] });
    expect(res.status).toBe(200);
    expect(res.json.data).toEqual({ valid: false, code: 'NOT_FOUND' });
  });
});
