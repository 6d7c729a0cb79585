// The official rate-limit SDKs against a live keyward with only the base URL changed:
// @unkey/ratelimit 2.x (Ratelimit, Overrides; reference/unkey-v2.md §0.1 item 8: it caches a
// refusal client-side until `reset`, so `reset` must be an absolute future ms timestamp) and
// @unkey/api 2.x's `ratelimit` namespace. Any SDK-side validation error fails the test.
import { Unkey } from '@unkey/api';
import { Overrides, Ratelimit } from '@unkey/ratelimit';
import { describe, expect, it } from 'vitest';
import { liveServer } from '../helpers/live.js';
import { HOUR, uniq } from '../helpers/ratelimits.js';
import { get } from '../helpers/server.js';

const srv = liveServer();

/** Answers counted by /metrics for ratelimits.limit (both prefixes count there). */
async function limitCalls(): Promise<number> {
  const res = await get(srv(), '/metrics');
  expect(res.status).toBe(200);
  let total = 0;
  for (const m of res.text.matchAll(/^keyward_requests_total\{procedure="ratelimits\.limit",status="\d+"\} (\d+)$/gm)) total += Number(m[1]);
  return total;
}

function sdk(): Unkey {
  return new Unkey({ serverURL: srv().url, rootKey: srv().rootKey, retryConfig: { strategy: 'none' } });
}

describe('@unkey/ratelimit', () => {
  it('limit(): success, then a refusal that is cached until reset (no further server call)', async () => {
    const rl = new Ratelimit({ rootKey: srv().rootKey, namespace: uniq('sdk'), limit: 2, duration: '1h', baseUrl: srv().url });
    const before = await limitCalls();
    const a = await rl.limit('user_1');
    expect(a).toMatchObject({ success: true, limit: 2, remaining: 1 });
    expect(a.reset).toBeGreaterThan(Date.now());
    expect(a.reset % HOUR).toBe(0);
    expect(await rl.limit('user_1')).toMatchObject({ success: true, remaining: 0 });
    const refused = await rl.limit('user_1');
    expect(refused).toMatchObject({ success: false, limit: 2, remaining: 0 });
    expect(await limitCalls()).toBe(before + 3);
    // Cached: answered without reaching the server.
    expect(await rl.limit('user_1')).toEqual(refused);
    expect(await rl.limit('user_1')).toEqual(refused);
    expect(await limitCalls()).toBe(before + 3);
    // Another identifier is not cached.
    expect(await rl.limit('user_2')).toMatchObject({ success: true });
    expect(await limitCalls()).toBe(before + 4);
  });

  it('the cached refusal expires at reset and the next call reaches the server again', async () => {
    const rl = new Ratelimit({ rootKey: srv().rootKey, namespace: uniq('sdk'), limit: 1, duration: 1_000, baseUrl: srv().url });
    expect(await rl.limit('u')).toMatchObject({ success: true });
    const asked = Date.now();
    const refused = await rl.limit('u');
    if (refused.success) return; // crossed a 1 s bucket boundary between the two calls: nothing to check
    // An absolute ms timestamp: the end of the bucket the call was counted in, so later than the
    // call was made and at most one bucket after its answer. (Not compared with the clock after
    // the answer: the bucket may end while the answer is on its way.)
    expect(refused.reset).toBeGreaterThan(asked);
    expect(refused.reset).toBeLessThanOrEqual(Date.now() + 1_000);
    const before = await limitCalls();
    await new Promise((r) => setTimeout(r, Math.max(0, refused.reset - Date.now()) + 150));
    const after = await rl.limit('u');
    expect(await limitCalls()).toBe(before + 1);
    // 150 ms into the next bucket the single previous admission weighs floor(1 · 0.85) = 0.
    expect(after).toMatchObject({ success: true, limit: 1 });
  });

  it('per-call cost and limit options are sent; the override helpers round-trip', async () => {
    const namespace = uniq('sdk');
    const rl = new Ratelimit({ rootKey: srv().rootKey, namespace, limit: 10, duration: '1h', baseUrl: srv().url });
    expect(await rl.limit('c', { cost: 4 })).toMatchObject({ success: true, remaining: 6 });
    expect(await rl.limit('c', { cost: 0 })).toMatchObject({ success: true, remaining: 6 });

    const ov = new Overrides({ rootKey: srv().rootKey, baseUrl: srv().url });
    const set = await ov.setOverride({ namespace, identifier: 'vip_*', limit: 100, duration: 60_000 });
    expect(set.data.overrideId).toMatch(/^rlor_/);
    const got = await ov.getOverride({ namespace, identifier: 'vip_9' });
    expect(got.data).toEqual({ overrideId: set.data.overrideId, identifier: 'vip_*', limit: 100, duration: 60_000 });
    const limited = await rl.limit('vip_9');
    expect(limited).toMatchObject({ success: true, limit: 100, remaining: 99, overrideId: set.data.overrideId });
    // @unkey/ratelimit bundles @unkey/api 2.2.0, whose listOverrides resolves to the body itself.
    const listed = await ov.listOverrides({ namespace });
    expect(listed.data.map((o) => o.overrideId)).toEqual([set.data.overrideId]);
    expect(listed.pagination?.hasMore).toBe(false);
    const deleted = await ov.deleteOverride({ namespace, identifier: 'vip_*' });
    expect(deleted.meta.requestId).toMatch(/^req_/);
    expect(await rl.limit('vip_9')).toMatchObject({ success: true, limit: 10 });
  });
});

describe('@unkey/api ratelimit namespace', () => {
  it('limit, multiLimit, setOverride, getOverride, listOverrides (every page), deleteOverride', async () => {
    const u = sdk();
    const namespace = uniq('api');
    // `a` is counted by two calls in a row: an hour, so that no bucket boundary (epoch-aligned)
    // falls between them.
    const l = await u.ratelimit.limit({ namespace, identifier: 'a', limit: 3, duration: HOUR });
    expect(l.meta.requestId).toMatch(/^req_/);
    expect(l.data).toMatchObject({ success: true, limit: 3, remaining: 2 });
    expect(l.data.overrideId).toBeUndefined();

    const m = await u.ratelimit.multiLimit([
      { namespace, identifier: 'a', limit: 3, duration: HOUR, cost: 1 },
      { namespace, identifier: 'b', limit: 1, duration: 60_000, cost: 2 },
    ]);
    expect(m.data.passed).toBe(false);
    expect(m.data.limits.map((x) => [x.identifier, x.passed, x.remaining])).toEqual([['a', true, 2], ['b', false, 0]]);

    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await u.ratelimit.setOverride({ namespace, identifier: `o_${i}`, limit: i, duration: 1_000 + i })).data.overrideId);
    const g = await u.ratelimit.getOverride({ namespace, identifier: 'o_3' });
    expect(g.data).toEqual({ overrideId: ids[3], identifier: 'o_3', limit: 3, duration: 1_003 });

    const pages: string[][] = [];
    for await (const page of await u.ratelimit.listOverrides({ namespace, limit: 2 })) {
      pages.push(page.result.data.map((o) => o.overrideId));
      if (pages.length > 10) throw new Error('the iterator does not stop');
    }
    expect(pages.map((p) => p.length)).toEqual([2, 2, 1]);
    expect(pages.flat().sort()).toEqual([...ids].sort());

    const d = await u.ratelimit.deleteOverride({ namespace, identifier: 'o_3' });
    expect(d.meta.requestId).toMatch(/^req_/);
    await expect(u.ratelimit.getOverride({ namespace, identifier: 'o_3' })).rejects.toMatchObject({ statusCode: 404 });
    const limited = await u.ratelimit.limit({ namespace, identifier: 'o_0', limit: 5, duration: 60_000 });
    expect(limited.data).toMatchObject({ success: false, limit: 0, overrideId: ids[0] });
  });
});
