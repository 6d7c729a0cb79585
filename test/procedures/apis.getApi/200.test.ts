import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, createApi, expectOk, rootKeyWith } from '../../helpers/server.js';

const srv = inProcessServer();

describe('apis.getApi 200', () => {
  it('returns exactly {id, name}', async () => {
    const apiId = await createApi(srv(), 'get-me');
    const res = await call(srv(), 'apis.getApi', { apiId });
    expect(expectOk(res)).toEqual({ id: apiId, name: 'get-me' });
    expect(res.json.pagination).toBeUndefined();
  });

  it('works with apis.<apiId>.read_api, apis.*.read_api and api.<apiId>.read_api', async () => {
    const apiId = await createApi(srv());
    for (const grant of [`apis.${apiId}.read_api`, 'apis.*.read_api', `api.${apiId}.read_api`, '*']) {
      const { key } = await rootKeyWith(srv(), [grant]);
      expect(expectOk(await call(srv(), 'apis.getApi', { apiId }, { rootKey: key })).id).toBe(apiId);
    }
  });
});
