import { describe, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, createApi, expectError, expectOk, foreignRootKey } from '../../helpers/server.js';

const srv = inProcessServer();

describe('apis.listKeys 404', () => {
  it('an unknown apiId → api_not_found', async () => {
    expectError(await call(srv(), 'apis.listKeys', { apiId: 'api_doesnotexist' }), 404, 'api_not_found');
  });

  it('a deleted API → api_not_found', async () => {
    const apiId = await createApi(srv());
    expectOk(await call(srv(), 'apis.deleteApi', { apiId }));
    expectError(await call(srv(), 'apis.listKeys', { apiId }), 404, 'api_not_found');
  });

  it("another workspace's API → 404 even with *", async () => {
    const apiId = await createApi(srv());
    const foreign = await foreignRootKey(srv());
    expectError(await call(srv(), 'apis.listKeys', { apiId }, { rootKey: foreign }), 404, 'api_not_found');
    expectOk(await call(srv(), 'apis.listKeys', { apiId }));
  });
});
