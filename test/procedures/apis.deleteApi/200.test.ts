import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, createApi, expectError, expectOk, rootKeyWith } from '../../helpers/server.js';

const srv = inProcessServer();

describe('apis.deleteApi 200', () => {
  it('returns {} and the API is gone for getApi and listKeys', async () => {
    const apiId = await createApi(srv());
    const res = await call(srv(), 'apis.deleteApi', { apiId });
    expect(expectOk(res)).toEqual({});
    expectError(await call(srv(), 'apis.getApi', { apiId }), 404, 'api_not_found');
    expectError(await call(srv(), 'apis.listKeys', { apiId }), 404, 'api_not_found');
  });

  it('a second delete → 404', async () => {
    const apiId = await createApi(srv());
    expectOk(await call(srv(), 'apis.deleteApi', { apiId }));
    expectError(await call(srv(), 'apis.deleteApi', { apiId }), 404, 'api_not_found');
  });

  it('other APIs are untouched', async () => {
    const keep = await createApi(srv(), 'keep-me');
    const drop = await createApi(srv(), 'drop-me');
    expectOk(await call(srv(), 'apis.deleteApi', { apiId: drop }));
    expect(expectOk(await call(srv(), 'apis.getApi', { apiId: keep }))).toEqual({ id: keep, name: 'keep-me' });
  });

  it('works with apis.<apiId>.delete_api for that id', async () => {
    const apiId = await createApi(srv());
    const { key } = await rootKeyWith(srv(), [`apis.${apiId}.delete_api`]);
    expect(expectOk(await call(srv(), 'apis.deleteApi', { apiId }, { rootKey: key }))).toEqual({});
  });

  it('concurrent deletes of one API: exactly one succeeds', async () => {
    const apiId = await createApi(srv());
    const results = await Promise.all(Array.from({ length: 8 }, () => call(srv(), 'apis.deleteApi', { apiId })));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 404)).toHaveLength(7);
  });
});
