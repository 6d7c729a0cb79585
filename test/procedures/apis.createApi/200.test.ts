import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, expectOk, rootKeyWith } from '../../helpers/server.js';

const srv = inProcessServer();

describe('apis.createApi 200', () => {
  it('returns apiId, id (the same) and the name', async () => {
    const data = expectOk(await call(srv(), 'apis.createApi', { name: 'my-api' }));
    expect(Object.keys(data as object).sort()).toEqual(['apiId', 'id', 'name']);
    expect(data.apiId).toMatch(/^api_[1-9A-HJ-NP-Za-km-z]+$/);
    expect(data.id).toBe(data.apiId);
    expect(data.name).toBe('my-api');
  });

  it('the new API can be read back', async () => {
    const { apiId } = expectOk(await call(srv(), 'apis.createApi', { name: 'readable' }));
    expect(expectOk(await call(srv(), 'apis.getApi', { apiId }))).toEqual({ id: apiId, name: 'readable' });
  });

  it.each([
    ['3 characters (minimum)', 'abc'],
    ['256 characters (maximum)', 'n'.repeat(256)],
    ['unicode', 'Zahlungs-API – €💳'],
    ['spaces and punctuation', ' a b.c/d?e '],
  ])('accepts a name of %s', async (_why, name) => {
    const data = expectOk(await call(srv(), 'apis.createApi', { name }));
    expect(data.name).toBe(name);
    expect(expectOk(await call(srv(), 'apis.getApi', { apiId: data.apiId })).name).toBe(name);
  });

  it('the same name twice makes two distinct APIs', async () => {
    const a = expectOk(await call(srv(), 'apis.createApi', { name: 'twin' }));
    const b = expectOk(await call(srv(), 'apis.createApi', { name: 'twin' }));
    expect(a.apiId).not.toBe(b.apiId);
  });

  it('concurrent creates all succeed with unique ids', async () => {
    const results = await Promise.all(Array.from({ length: 30 }, (_, i) => call(srv(), 'apis.createApi', { name: `concurrent-${i}` })));
    const ids = results.map((r) => expectOk(r).apiId as string);
    expect(new Set(ids).size).toBe(30);
  });

  it('works with apis.*.create_api and with the alias api.*.create_api', async () => {
    for (const grant of ['apis.*.create_api', 'api.*.create_api', '*.*.create_api', 'apis.*.*']) {
      const { key } = await rootKeyWith(srv(), [grant]);
      expectOk(await call(srv(), 'apis.createApi', { name: `via-${grant}` }, { rootKey: key }));
    }
  });
});
