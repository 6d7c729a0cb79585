import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, expectOk, foreignRootKey } from '../../helpers/server.js';

const srv = inProcessServer();

interface Perm { id: string; name: string; slug: string; description?: string }

async function listAll(body: Record<string, unknown>, rootKey?: string): Promise<Perm[]> {
  const seen: Perm[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 50; page++) {
    const res = await call(srv(), 'permissions.listPermissions', cursor === undefined ? body : { ...body, cursor }, rootKey === undefined ? {} : { rootKey });
    const data = expectOk(res) as Perm[];
    seen.push(...data);
    cursor = res.json.pagination.cursor as string | undefined;
    expect(res.json.pagination.hasMore).toBe(cursor !== undefined);
    if (cursor === undefined) return seen;
  }
  throw new Error('too many pages');
}

describe('permissions.listPermissions 200', () => {
  it('an empty workspace: data [] and pagination {hasMore:false}', async () => {
    const res = await call(srv(), 'permissions.listPermissions', {});
    expect(expectOk(res)).toEqual([]);
    expect(res.json.pagination).toEqual({ hasMore: false });
  });

  it('pages through every permission in id order with limit 1 and 100; search filters case-insensitively', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) {
      const body = { name: i === 3 ? 'Special Name' : `perm ${i}`, slug: `list.p${i}`, ...(i === 5 ? { description: 'has a NEEDLE inside' } : {}) };
      ids.push(expectOk(await call(srv(), 'permissions.createPermission', body)).permissionId as string);
    }
    const sorted = [...ids].sort();
    expect((await listAll({ limit: 1 })).map((p) => p.id)).toEqual(sorted);
    expect((await listAll({ limit: 3 })).map((p) => p.id)).toEqual(sorted);
    const all = await listAll({ limit: 100 });
    expect(all.map((p) => p.id)).toEqual(sorted);
    expect(all.find((p) => p.id === ids[5])).toEqual({ id: ids[5], name: 'perm 5', slug: 'list.p5', description: 'has a NEEDLE inside' });

    expect((await listAll({ search: 'special' })).map((p) => p.slug)).toEqual(['list.p3']);
    expect((await listAll({ search: 'needle' })).map((p) => p.slug)).toEqual(['list.p5']);
    expect((await listAll({ search: 'LIST.P6' })).map((p) => p.slug)).toEqual(['list.p6']);
    expect((await listAll({ search: (ids[2] as string).toLowerCase() })).map((p) => p.id)).toEqual([ids[2]]);
    expect((await listAll({ search: 'list.', limit: 2 })).map((p) => p.id)).toEqual(sorted);
    expect(await listAll({ search: 'nothing matches this' })).toEqual([]);
    expect((await listAll({ search: '' })).map((p) => p.id)).toEqual(sorted);
  });

  it('another workspace sees none of these permissions', async () => {
    expectOk(await call(srv(), 'permissions.createPermission', { name: 'n', slug: 'isolated.one' }));
    const foreign = await foreignRootKey(srv());
    expect(await listAll({}, foreign)).toEqual([]);
  });
});
