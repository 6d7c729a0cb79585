// ratelimits.multiLimit 200: top-level array body, results in request order, all or nothing
// (reference/unkey-v2.md §1.3 ratelimit.multiLimit, §4.2).
import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { createNamespace, limitOk, MIN, namespaceIdOf, uniq, HOUR as H } from '../../helpers/ratelimits.js';
import { call, expectOk } from '../../helpers/server.js';

const srv = inProcessServer();

interface Item {
  namespace: string;
  identifier: string;
  limit: number;
  remaining: number;
  reset: number;
  passed: boolean;
  overrideId?: string;
}

async function multi(items: unknown[], procedure = 'ratelimits.multiLimit'): Promise<{ passed: boolean; limits: Item[] }> {
  return expectOk(await call(srv(), procedure, items)) as { passed: boolean; limits: Item[] };
}

describe('ratelimits.multiLimit 200', () => {
  it('shape: {passed, limits:[{namespace, identifier, limit, remaining, reset, passed}]} in request order', async () => {
    const [a, b] = [uniq(), uniq()];
    // `a` is counted again below: an hour, so that no bucket boundary (epoch-aligned) falls between.
    const data = await multi([
      { namespace: a, identifier: 'x', limit: 5, duration: H, cost: 2 },
      { namespace: b, identifier: 'y', limit: 3, duration: 1_000 },
    ]);
    expect(Object.keys(data).sort()).toEqual(['limits', 'passed']);
    expect(data.passed).toBe(true);
    expect(data.limits).toHaveLength(2);
    expect(Object.keys(data.limits[0] ?? {}).sort()).toEqual(['identifier', 'limit', 'namespace', 'passed', 'remaining', 'reset']);
    expect(data.limits[0]).toMatchObject({ namespace: a, identifier: 'x', limit: 5, remaining: 3, passed: true });
    expect(data.limits[1]).toMatchObject({ namespace: b, identifier: 'y', limit: 3, remaining: 2, passed: true });
    expect((data.limits[0]?.reset ?? 0) % H).toBe(0);
    expect((data.limits[1]?.reset ?? 0) % 1_000).toBe(0);
    // The counters moved, as with ratelimits.limit.
    expect(await limitOk(srv(), { namespace: a, identifier: 'x', limit: 5, duration: H, cost: 0 })).toMatchObject({ remaining: 3 });
  });

  it('one refused item: passed:false, nothing consumed, passing items report remaining with their cost added back', async () => {
    const ns = uniq();
    await limitOk(srv(), { namespace: ns, identifier: 'full', limit: 1, duration: H });
    await limitOk(srv(), { namespace: ns, identifier: 'half', limit: 10, duration: H, cost: 5 });
    const data = await multi([
      { namespace: ns, identifier: 'fresh', limit: 10, duration: H, cost: 3 },
      { namespace: ns, identifier: 'full', limit: 1, duration: H },
      { namespace: ns, identifier: 'half', limit: 10, duration: H, cost: 2 },
    ]);
    expect(data.passed).toBe(false);
    expect(data.limits.map((l) => [l.identifier, l.passed, l.remaining])).toEqual([['fresh', true, 10], ['full', false, 0], ['half', true, 5]]);
    for (const [identifier, limit, remaining] of [['fresh', 10, 10], ['half', 10, 5]] as const) {
      expect(await limitOk(srv(), { namespace: ns, identifier, limit, duration: H, cost: 0 }), identifier).toMatchObject({ remaining });
    }
  });

  it('the ratelimit.multiLimit alias and namespace ids: the namespace field echoes the request string', async () => {
    const ns = await createNamespace(srv());
    const id = await namespaceIdOf(srv(), ns);
    const data = await multi([
      { namespace: ns, identifier: 'e', limit: 3, duration: H },
      { namespace: id, identifier: 'e', limit: 3, duration: H },
    ], 'ratelimit.multiLimit');
    // One window (by name and by id): both items see both costs (Unkey's post-increment values).
    expect(data.limits.map((l) => [l.namespace, l.remaining])).toEqual([[ns, 1], [id, 1]]);
  });

  it('overrides apply per item and are reported', async () => {
    const ns = await createNamespace(srv());
    const { overrideId } = expectOk(await call(srv(), 'ratelimits.setOverride', { namespace: ns, identifier: 'o_*', limit: 1, duration: H }));
    const data = await multi([
      { namespace: ns, identifier: 'o_1', limit: 100, duration: MIN },
      { namespace: ns, identifier: 'p_1', limit: 100, duration: MIN },
    ]);
    expect(data.limits[0]).toMatchObject({ limit: 1, remaining: 0, passed: true, overrideId });
    expect(data.limits[1]).not.toHaveProperty('overrideId');
    const again = await multi([{ namespace: ns, identifier: 'o_1', limit: 100, duration: MIN }]);
    expect(again).toMatchObject({ passed: false, limits: [{ passed: false, overrideId }] });
  });

  it('100 items are accepted; new namespaces are created on first use', async () => {
    const ns = uniq();
    const data = await multi(Array.from({ length: 100 }, (_, i) => ({ namespace: ns, identifier: `id${i}`, limit: 2, duration: MIN })));
    expect(data.passed).toBe(true);
    expect(data.limits.map((l) => l.identifier)).toEqual(Array.from({ length: 100 }, (_, i) => `id${i}`));
    expect(data.limits.every((l) => l.remaining === 1)).toBe(true);
    expect((await call(srv(), 'ratelimits.listOverrides', { namespace: ns })).status).toBe(200);
  });
});
