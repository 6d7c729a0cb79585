import { describe, expect, it } from 'vitest';
import { liveServer } from '../../helpers/live.js';
import { call, createApi, expectOk, get, rootKeyWith } from '../../helpers/server.js';

const srv = liveServer();

describe('apis.listKeys 200', () => {
  it('an API without keys: data [] and pagination {hasMore:false} without cursor', async () => {
    const apiId = await createApi(srv());
    const res = await call(srv(), 'apis.listKeys', { apiId });
    expect(expectOk(res)).toEqual([]);
    expect(res.json.pagination).toEqual({ hasMore: false });
    expect(Object.keys(res.json as object).sort()).toEqual(['data', 'meta', 'pagination']);
  });

  it.each([
    ['limit 1', { limit: 1 }],
    ['limit 100', { limit: 100 }],
    ['an externalId filter', { externalId: 'user_123.a-b' }],
    ['the SDK defaults', { limit: 100, decrypt: false, revalidateKeysCache: false }],
    ['revalidateKeysCache true', { revalidateKeysCache: true }],
    ['an empty cursor (first page)', { cursor: '' }],
  ])('accepts %s', async (_why, extra) => {
    const apiId = await createApi(srv());
    const res = await call(srv(), 'apis.listKeys', { apiId, ...extra });
    expect(expectOk(res)).toEqual([]);
    expect(res.json.pagination.hasMore).toBe(false);
  });

  it('works with per-API grants for read_key and read_api', async () => {
    const apiId = await createApi(srv());
    const { key } = await rootKeyWith(srv(), [`apis.${apiId}.read_key`, `api.${apiId}.read_api`]);
    expect(expectOk(await call(srv(), 'apis.listKeys', { apiId }, { rootKey: key }))).toEqual([]);
  });

  // Runs once keys.createKey is served: pages through keys with a small limit.
  it('pages through keys in order when keys exist', async () => {
    const openapi = await get(srv(), '/openapi.json');
    if (openapi.json.paths['/v2/keys.createKey'] === undefined) return;
    const apiId = await createApi(srv());
    const created: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await call(srv(), 'keys.createKey', { apiId, externalId: i % 2 === 0 ? 'even' : 'odd' });
      created.push(expectOk(res).keyId as string);
    }
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 10; page++) {
      const res = await call(srv(), 'apis.listKeys', cursor === undefined ? { apiId, limit: 2 } : { apiId, limit: 2, cursor });
      const data = expectOk(res) as { keyId: string }[];
      expect(data.length).toBeLessThanOrEqual(2);
      seen.push(...data.map((k) => k.keyId));
      cursor = res.json.pagination.cursor as string | undefined;
      expect(res.json.pagination.hasMore).toBe(cursor !== undefined);
      if (cursor === undefined) break;
    }
    expect(seen).toEqual([...created].sort());
    const even = expectOk(await call(srv(), 'apis.listKeys', { apiId, externalId: 'even' })) as { externalId: string }[];
    expect(even).toHaveLength(3);
    for (const k of even) expect(k.externalId).toBe('even');
  });
});
