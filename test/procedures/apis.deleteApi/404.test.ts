import { describe, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, createApi, expectError, expectOk, foreignRootKey } from '../../helpers/server.js';

const srv = inProcessServer();

describe('apis.deleteApi 404', () => {
  it('an unknown apiId → api_not_found', async () => {
    expectError(await call(srv(), 'apis.deleteApi', { apiId: 'api_doesnotexist' }), 404, 'api_not_found');
  });

  it("another workspace's API → 404 even with *, and it is not deleted", async () => {
    const apiId = await createApi(srv());
    const foreign = await foreignRootKey(srv());
    expectError(await call(srv(), 'apis.deleteApi', { apiId }, { rootKey: foreign }), 404, 'api_not_found');
    expectOk(await call(srv(), 'apis.getApi', { apiId }));
  });
});
