import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, createApi, expectError, expectOk } from '../../helpers/server.js';

const srv = inProcessServer();

describe('identities.createIdentity 409', () => {
  it('a second identity with the same externalId → 409; the first keeps its meta', async () => {
    const first = expectOk(await call(srv(), 'identities.createIdentity', { externalId: 'taken', meta: { v: 1 } }));
    const error = expectError(await call(srv(), 'identities.createIdentity', { externalId: 'taken', meta: { v: 2 } }), 409, 'identity_already_exists');
    expect(error.detail).toContain('taken');
    expect(expectOk(await call(srv(), 'identities.getIdentity', { identity: 'taken' }))).toEqual({ id: first.identityId, externalId: 'taken', meta: { v: 1 } });
  });

  it('an identity created by keys.createKey also conflicts', async () => {
    const apiId = await createApi(srv());
    expectOk(await call(srv(), 'keys.createKey', { apiId, externalId: 'key-made' }));
    expectError(await call(srv(), 'identities.createIdentity', { externalId: 'key-made' }), 409, 'identity_already_exists');
  });

  it('10 concurrent creates of one externalId → exactly one 200', async () => {
    const results = await Promise.all(Array.from({ length: 10 }, () => call(srv(), 'identities.createIdentity', { externalId: 'racer' })));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 409)).toHaveLength(9);
  });
});
