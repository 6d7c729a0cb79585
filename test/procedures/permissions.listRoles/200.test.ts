import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, expectOk, foreignRootKey } from '../../helpers/server.js';

const srv = inProcessServer();

interface Role { id: string; name: string; description?: string; permissions?: { slug: string }[] }

async function listAll(body: Record<string, unknown>, rootKey?: string): Promise<Role[]> {
  const seen: Role[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 50; page++) {
    const res = await call(srv(), 'permissions.listRoles', cursor === undefined ? body : { ...body, cursor }, rootKey === undefined ? {} : { rootKey });
    seen.push(...(expectOk(res) as Role[]));
    cursor = res.json.pagination.cursor as string | undefined;
    expect(res.json.pagination.hasMore).toBe(cursor !== undefined);
    if (cursor === undefined) return seen;
  }
  throw new Error('too many pages');
}

describe('permissions.listRoles 200', () => {
  it('an empty workspace: data [] and pagination {hasMore:false}', async () => {
    const res = await call(srv(), 'permissions.listRoles', {});
    expect(expectOk(res)).toEqual([]);
    expect(res.json.pagination).toEqual({ hasMore: false });
  });

  it('pages through roles in id order, each with its permissions; search filters case-insensitively', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const body = { name: `role-${i}`, ...(i === 2 ? { description: 'The Admins' } : {}), ...(i === 4 ? { permissions: ['lr.a', 'lr.b'] } : {}) };
      ids.push(expectOk(await call(srv(), 'permissions.createRole', body)).roleId as string);
    }
    const sorted = [...ids].sort();
    expect((await listAll({ limit: 1 })).map((r) => r.id)).toEqual(sorted);
    const all = await listAll({ limit: 100 });
    expect(all.map((r) => r.id)).toEqual(sorted);
    expect(all.find((r) => r.id === ids[4])?.permissions?.map((p) => p.slug)).toEqual(['lr.a', 'lr.b']);
    expect((await listAll({ search: 'ADMIN' })).map((r) => r.name)).toEqual(['role-2']);
    expect((await listAll({ search: 'ROLE-3' })).map((r) => r.name)).toEqual(['role-3']);
    expect((await listAll({ search: 'role-', limit: 2 })).map((r) => r.id)).toEqual(sorted);
    // Search covers ids too: a term without a '-' could occur in a random base58 id.
    expect(await listAll({ search: 'no-such-role' })).toEqual([]);
  });

  it('another workspace sees none of these roles', async () => {
    expectOk(await call(srv(), 'permissions.createRole', { name: 'isolated-role' }));
    expect(await listAll({}, await foreignRootKey(srv()))).toEqual([]);
  });
});
