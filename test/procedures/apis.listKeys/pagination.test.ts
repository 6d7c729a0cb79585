// apis.listKeys with real keys: full records with a top-level externalId, the externalId
// filter, stable key-id order, paging with limit 7 over 50 keys, and paging while keys are
// being created concurrently.
import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, createApi, expectOk } from '../../helpers/server.js';
import { getKey, newKey, newRole } from '../../helpers/keys.js';

const srv = inProcessServer();

interface Page {
  data: { keyId: string; externalId?: string }[];
  cursor?: string;
  hasMore: boolean;
}

async function page(apiId: string, limit: number, cursor?: string, extra: Record<string, unknown> = {}): Promise<Page> {
  const res = await call(srv(), 'apis.listKeys', { apiId, limit, ...(cursor === undefined ? {} : { cursor }), ...extra });
  const data = expectOk(res) as Page['data'];
  const pagination = res.json.pagination as { cursor?: string; hasMore: boolean };
  expect(typeof pagination.hasMore).toBe('boolean');
  expect(pagination.hasMore).toBe(pagination.cursor !== undefined);
  if (pagination.cursor !== undefined) expect(pagination.cursor).not.toBe('');
  return { data, cursor: pagination.cursor, hasMore: pagination.hasMore };
}

async function pageAll(apiId: string, limit: number, extra: Record<string, unknown> = {}): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const p = await page(apiId, limit, cursor, extra);
    expect(p.data.length).toBeLessThanOrEqual(limit);
    if (p.hasMore) expect(p.data).toHaveLength(limit);
    ids.push(...p.data.map((k) => k.keyId));
    cursor = p.cursor;
    pages++;
    if (pages > 1000) throw new Error('pagination does not end');
  } while (cursor !== undefined);
  return { ids, pages };
}

describe('apis.listKeys pagination with real keys', () => {
  it('items are full key records (as getKey shows them) with a top-level externalId', async () => {
    const role = await newRole(srv(), ['lk.role']);
    const apiId = await createApi(srv());
    const { keyId } = await newKey(srv(), {
      apiId, name: 'listed', externalId: 'lk_owner', meta: { a: 1 }, roles: [role], permissions: ['lk.direct'],
      credits: { remaining: 3, refill: { interval: 'daily', amount: 3 } }, ratelimits: [{ name: 'lk_rl', limit: 2, duration: 1000 }], expires: 4000000000000,
    });
    const [item] = (await page(apiId, 100)).data;
    expect(item).toEqual(await getKey(srv(), keyId));
    expect(item).toMatchObject({ keyId, externalId: 'lk_owner', identity: { externalId: 'lk_owner' }, name: 'listed', credits: { remaining: 3 } });
    expect(item).not.toHaveProperty('plaintext');
  });

  it('50 keys, limit 7: 8 pages, every key exactly once, in key-id order; the order is stable', async () => {
    const apiId = await createApi(srv());
    const created: string[] = [];
    for (let i = 0; i < 50; i++) created.push((await newKey(srv(), { apiId, externalId: i % 5 === 0 ? 'lk_fifth' : `lk_${i}` })).keyId);
    const { ids, pages } = await pageAll(apiId, 7);
    expect(pages).toBe(8);
    expect(ids).toHaveLength(50);
    expect(new Set(ids).size).toBe(50);
    expect(ids).toEqual([...created].sort());
    expect((await pageAll(apiId, 7)).ids).toEqual(ids);
    expect((await page(apiId, 100)).data.map((k) => k.keyId)).toEqual(ids);
    expect((await pageAll(apiId, 1)).ids).toEqual(ids);
  });

  it('the externalId filter returns only that owner\'s keys of this API, paged', async () => {
    const apiId = await createApi(srv());
    const otherApi = await createApi(srv());
    const mine: string[] = [];
    for (let i = 0; i < 12; i++) {
      const { keyId } = await newKey(srv(), { apiId, externalId: i % 2 === 0 ? 'lk_filter' : 'lk_someone_else' });
      if (i % 2 === 0) mine.push(keyId);
    }
    await newKey(srv(), { apiId: otherApi, externalId: 'lk_filter' });
    const { ids } = await pageAll(apiId, 4, { externalId: 'lk_filter' });
    expect(ids).toEqual([...mine].sort());
    const all = (await page(apiId, 100, undefined, { externalId: 'lk_filter' })).data;
    for (const k of all) expect(k.externalId).toBe('lk_filter');
    expect((await page(apiId, 100, undefined, { externalId: 'nobody_has_this' })).data).toEqual([]);
  });

  it('deleted keys are skipped and hasMore stays exact', async () => {
    const apiId = await createApi(srv());
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) ids.push((await newKey(srv(), { apiId })).keyId);
    ids.sort();
    for (const id of ids.slice(5)) expectOk(await call(srv(), 'keys.deleteKey', { keyId: id }));
    const first = await page(apiId, 5);
    expect(first.data.map((k) => k.keyId)).toEqual(ids.slice(0, 5));
    expect(first.hasMore).toBe(false);
  });

  it('paging while another loop creates keys: every pre-existing key exactly once, no duplicates', async () => {
    const apiId = await createApi(srv());
    const before: string[] = [];
    for (let i = 0; i < 50; i++) before.push((await newKey(srv(), { apiId })).keyId);
    let stop = false;
    const during: string[] = [];
    const creator = (async () => {
      while (!stop) during.push((await newKey(srv(), { apiId })).keyId);
    })();
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    try {
      do {
        const p = await page(apiId, 7, cursor);
        seen.push(...p.data.map((k) => k.keyId));
        cursor = p.cursor;
        pages++;
        // let the creator get a few keys in between pages
        await new Promise((r) => setTimeout(r, 5));
      } while (cursor !== undefined && pages < 500);
    } finally {
      stop = true;
      await creator;
    }
    expect(during.length).toBeGreaterThan(0);
    expect(new Set(seen).size).toBe(seen.length);
    for (const id of before) expect(seen.filter((s) => s === id)).toHaveLength(1);
    expect([...seen]).toEqual([...seen].sort());
    for (const id of seen) expect([...before, ...during]).toContain(id);
  });
});
