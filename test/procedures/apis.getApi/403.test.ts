import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, createApi, expectError, rootKeyWith } from '../../helpers/server.js';

const srv = inProcessServer();

describe('apis.getApi 403', () => {
  it('without read_api → 403 naming both acceptable permissions', async () => {
    const apiId = await createApi(srv());
    const { key } = await rootKeyWith(srv(), ['apis.*.create_api', 'apis.*.read_key']);
    const error = expectError(await call(srv(), 'apis.getApi', { apiId }, { rootKey: key }), 403, 'insufficient_permissions');
    expect(error.title).toBe('Forbidden');
    expect(error.detail).toContain('apis.*.read_api');
    expect(error.detail).toContain(`apis.${apiId}.read_api`);
  });

  it('read_api for another API only → 403', async () => {
    const apiId = await createApi(srv());
    const other = await createApi(srv());
    const { key } = await rootKeyWith(srv(), [`apis.${other}.read_api`]);
    expectError(await call(srv(), 'apis.getApi', { apiId }, { rootKey: key }), 403, 'insufficient_permissions');
  });

  it('the permission is checked before existence (no existence leak)', async () => {
    const { key } = await rootKeyWith(srv(), ['apis.*.create_api']);
    expectError(await call(srv(), 'apis.getApi', { apiId: 'api_doesnotexist' }, { rootKey: key }), 403, 'insufficient_permissions');
  });
});
