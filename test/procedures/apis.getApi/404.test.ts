import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, createApi, expectError, expectOk, foreignRootKey } from '../../helpers/server.js';

const srv = inProcessServer();

describe('apis.getApi 404', () => {
  it('an unknown apiId → api_not_found naming it', async () => {
    const error = expectError(await call(srv(), 'apis.getApi', { apiId: 'api_doesnotexist' }), 404, 'api_not_found');
    expect(error.type).toMatch(/\/data\/api_not_found$/);
    expect(error.detail).toContain('api_doesnotexist');
  });

  it('a deleted API → api_not_found', async () => {
    const apiId = await createApi(srv());
    expectOk(await call(srv(), 'apis.deleteApi', { apiId }));
    expectError(await call(srv(), 'apis.getApi', { apiId }), 404, 'api_not_found');
  });

  it("another workspace's API → 404 even with *", async () => {
    const apiId = await createApi(srv());
    const foreign = await foreignRootKey(srv());
    expectError(await call(srv(), 'apis.getApi', { apiId }, { rootKey: foreign }), 404, 'api_not_found');
    expectOk(await call(srv(), 'apis.getApi', { apiId }));
  });
});
