import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, createApi, expectError, expectOk, rootKeyWith } from '../../helpers/server.js';

const srv = inProcessServer();

describe('apis.deleteApi 403', () => {
  it.each([
    ['read only', (_id: string, _other: string) => ['apis.*.read_api', 'apis.*.create_api']],
    ['delete for another API', (_id: string, other: string) => [`apis.${other}.delete_api`]],
    ['delete_key is not delete_api', () => ['apis.*.delete_key']],
  ])('%s → 403 and the API still exists', async (_why, grants) => {
    const apiId = await createApi(srv());
    const other = await createApi(srv());
    const { key } = await rootKeyWith(srv(), grants(apiId, other));
    const error = expectError(await call(srv(), 'apis.deleteApi', { apiId }, { rootKey: key }), 403, 'insufficient_permissions');
    expect(error.detail).toContain('apis.*.delete_api');
    expect(error.detail).toContain(`apis.${apiId}.delete_api`);
    expectOk(await call(srv(), 'apis.getApi', { apiId }));
  });
});
