// ratelimits.listOverrides 200: data is the array itself; default page 10, max 100; opaque
// cursor, omitted on the last page; hasMore always present (DESIGN.md §2 Pagination).
import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { createNamespace, namespaceIdOf } from '../../helpers/ratelimits.js';
import { call, expectOk, type CallResult } from '../../helpers/server.js';

const srv = inProcessServer();

interface Override {
  overrideId: string;
  namespace: string;
  identifier: string;
  limit: number;
  duration: number;
}

function page(res: CallResult): { data: Override[]; cursor?: string; hasMore: boolean } {
  const data = expectOk(res) as Override[];
  expect(Array.isArray(data)).toBe(true);
  const pagination = (res.json as { pagination: { cursor?: string; hasMore: boolean } }).pagination;
  expect(typeof pagination.hasMore).toBe('boolean');
  return { data, cursor: pagination.cursor, hasMore: pagination.hasMore };
}

describe('ratelimits.listOverrides 200', () => {
  let ns: string;
  const ids: string[] = [];

  it('25 overrides: default page of 10, cursor pagination visits each exactly once', async () => {
    ns = await createNamespace(srv());
    for (let i = 0; i < 25; i++) {
      const { overrideId } = expectOk(await call(srv(), 'ratelimits.setOverride', { namespace: ns, identifier: i % 5 === 0 ? `pat_${i}_*` : `id_${i}`, limit: i, duration: 1_000 + i }));
      ids.push(overrideId as string);
    }
    const seen: Override[] = [];
    const sizes: number[] = [];
    let cursor: string | undefined;
    for (let n = 0; n < 10; n++) {
      const p = page(await call(srv(), 'ratelimits.listOverrides', cursor === undefined ? { namespace: ns } : { namespace: ns, cursor }));
      seen.push(...p.data);
      sizes.push(p.data.length);
      if (!p.hasMore) {
        expect(p.cursor === undefined || p.cursor === '').toBe(true);
        break;
      }
      expect(typeof p.cursor).toBe('string');
      expect(p.cursor).not.toBe('');
      cursor = p.cursor;
    }
    expect(sizes).toEqual([10, 10, 5]);
    expect(seen.map((o) => o.overrideId).sort()).toEqual([...ids].sort());
    expect(new Set(seen.map((o) => o.overrideId)).size).toBe(25);
    for (const o of seen) {
      expect(Object.keys(o).sort()).toEqual(['duration', 'identifier', 'limit', 'namespace', 'overrideId']);
      const i = ids.indexOf(o.overrideId);
      expect(o).toEqual({ overrideId: ids[i], namespace: ns, identifier: i % 5 === 0 ? `pat_${i}_*` : `id_${i}`, limit: i, duration: 1_000 + i });
    }
  });

  it('limit 100 returns all 25 at once with hasMore false; limit 1 pages one by one (alias prefix, rlns_ id)', async () => {
    const all = page(await call(srv(), 'ratelimits.listOverrides', { namespace: ns, limit: 100 }));
    expect(all.data).toHaveLength(25);
    expect(all.hasMore).toBe(false);
    expect(all.cursor === undefined || all.cursor === '').toBe(true);
    const id = await namespaceIdOf(srv(), ns);
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let n = 0; n < 30; n++) {
      const p = page(await call(srv(), 'ratelimit.listOverrides', { namespace: id, limit: 1, ...(cursor === undefined ? {} : { cursor }) }));
      seen.push(...p.data.map((o) => o.overrideId));
      if (!p.hasMore) break;
      cursor = p.cursor;
    }
    expect(seen).toEqual(all.data.map((o) => o.overrideId));
  });

  it('deleted overrides are not listed; an empty namespace lists [] with hasMore false', async () => {
    expectOk(await call(srv(), 'ratelimits.deleteOverride', { namespace: ns, identifier: 'id_1' }));
    expectOk(await call(srv(), 'ratelimits.deleteOverride', { namespace: ns, identifier: 'pat_5_*' }));
    const all = page(await call(srv(), 'ratelimits.listOverrides', { namespace: ns, limit: 100 }));
    expect(all.data).toHaveLength(23);
    expect(all.data.map((o) => o.identifier)).not.toContain('id_1');
    expect(all.data.map((o) => o.identifier)).not.toContain('pat_5_*');
    const empty = await createNamespace(srv());
    const p = page(await call(srv(), 'ratelimits.listOverrides', { namespace: empty }));
    expect(p).toMatchObject({ data: [], hasMore: false });
  });
});
