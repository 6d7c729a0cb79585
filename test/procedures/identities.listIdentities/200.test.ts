import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, expectOk, foreignRootKey, rootKeyWith } from '../../helpers/server.js';

const srv = inProcessServer();

interface Identity { id: string; externalId: string; meta?: unknown; ratelimits?: unknown[] }

async function listAll(body: Record<string, unknown>, rootKey?: string): Promise<Identity[]> {
  const seen: Identity[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 50; page++) {
    const res = await call(srv(), 'identities.listIdentities', cursor === undefined ? body : { ...body, cursor }, rootKey === undefined ? {} : { rootKey });
    seen.push(...(expectOk(res) as Identity[]));
    cursor = res.json.pagination.cursor as string | undefined;
    expect(res.json.pagination.hasMore).toBe(cursor !== undefined);
    if (cursor === undefined) return seen;
  }
  throw new Error('too many pages');
}

describe('identities.listIdentities 200', () => {
  it('an empty workspace: data [] and pagination {hasMore:false}', async () => {
    const res = await call(srv(), 'identities.listIdentities', {});
    expect(expectOk(res)).toEqual([]);
    expect(res.json.pagination).toEqual({ hasMore: false });
  });

  it('pages through identities in id order with meta and rate limits; search on id / externalId', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) {
      const body = { externalId: i === 2 ? 'Customer.Acme' : `user-${i}`, ...(i === 4 ? { meta: { i }, ratelimits: [{ name: 'calls', limit: 3, duration: 1000 }] } : {}) };
      ids.push(expectOk(await call(srv(), 'identities.createIdentity', body)).identityId as string);
    }
    const sorted = [...ids].sort();
    expect((await listAll({ limit: 1 })).map((x) => x.id)).toEqual(sorted);
    const all = await listAll({ limit: 100 });
    expect(all.map((x) => x.id)).toEqual(sorted);
    expect(all.find((x) => x.id === ids[4])).toMatchObject({ externalId: 'user-4', meta: { i: 4 }, ratelimits: [{ name: 'calls', limit: 3, duration: 1000, autoApply: false }] });
    // Search covers ids too: a term of base58 characters alone (as 'acme') can occur in a random id.
    expect((await listAll({ search: '.acme' })).map((x) => x.externalId)).toEqual(['Customer.Acme']);
    expect((await listAll({ search: (ids[1] as string).toUpperCase() })).map((x) => x.id)).toEqual([ids[1]]);
    expect((await listAll({ search: 'user-', limit: 2 })).map((x) => x.externalId)).toEqual(all.filter((x) => x.externalId.startsWith('user-')).map((x) => x.externalId));
    expect(await listAll({ search: 'no-match' })).toEqual([]);
  });

  it('a root key with per-identity grants sees only those identities', async () => {
    const a = expectOk(await call(srv(), 'identities.createIdentity', { externalId: 'granted-a' })).identityId as string;
    expectOk(await call(srv(), 'identities.createIdentity', { externalId: 'not-granted' }));
    const { key } = await rootKeyWith(srv(), [`identities.${a}.read_identity`]);
    expect((await listAll({}, key)).map((x) => x.id)).toEqual([a]);
  });

  it('another workspace sees none of these identities', async () => {
    expectOk(await call(srv(), 'identities.createIdentity', { externalId: 'isolated' }));
    expect(await listAll({}, await foreignRootKey(srv()))).toEqual([]);
  });
});
