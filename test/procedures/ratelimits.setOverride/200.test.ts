// ratelimits.setOverride 200: {overrideId}; upsert keyed by (namespace, identifier) keeps the
// id; takes effect on the next limit call (reference/unkey-v2.md §1.3, §4.3).
import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { createNamespace, limitOk, MIN, namespaceIdOf, HOUR as H } from '../../helpers/ratelimits.js';
import { call, expectOk } from '../../helpers/server.js';

const srv = inProcessServer();

describe('ratelimits.setOverride 200', () => {
  it('returns exactly {overrideId} (rlor_…); both path prefixes', async () => {
    const ns = await createNamespace(srv());
    for (const procedure of ['ratelimits.setOverride', 'ratelimit.setOverride']) {
      const data = expectOk(await call(srv(), procedure, { namespace: ns, identifier: `id-${procedure}`, limit: 5, duration: MIN }));
      expect(Object.keys(data)).toEqual(['overrideId']);
      expect(data.overrideId).toMatch(/^rlor_[A-Za-z0-9]+$/);
    }
  });

  it('an upsert keeps the id and replaces limit and duration at once', async () => {
    const ns = await createNamespace(srv());
    // Hour-long overrides: the two limit calls are compared by count, so no bucket boundary
    // (epoch-aligned) may fall between them.
    const first = expectOk(await call(srv(), 'ratelimits.setOverride', { namespace: ns, identifier: 'u', limit: 1, duration: H }));
    expect(await limitOk(srv(), { namespace: ns, identifier: 'u', limit: 100, duration: H })).toMatchObject({ limit: 1, remaining: 0, overrideId: first.overrideId });
    const again = expectOk(await call(srv(), 'ratelimits.setOverride', { namespace: ns, identifier: 'u', limit: 3, duration: H }));
    expect(again.overrideId).toBe(first.overrideId);
    expect(await limitOk(srv(), { namespace: ns, identifier: 'u', limit: 100, duration: H })).toMatchObject({ success: true, limit: 3, remaining: 1, overrideId: first.overrideId });
    expect(expectOk(await call(srv(), 'ratelimits.getOverride', { namespace: ns, identifier: 'u' }))).toEqual({ overrideId: first.overrideId, identifier: 'u', limit: 3, duration: H });
  });

  it('limit 0 is accepted and refuses every request (200 success:false, not a 500)', async () => {
    const ns = await createNamespace(srv());
    const { overrideId } = expectOk(await call(srv(), 'ratelimits.setOverride', { namespace: ns, identifier: 'blocked_*', limit: 0, duration: 1_000 }));
    for (const cost of [1, 0]) {
      expect(await limitOk(srv(), { namespace: ns, identifier: 'blocked_7', limit: 100, duration: H, cost })).toMatchObject({ success: false, limit: 0, remaining: 0, overrideId });
    }
  });

  it('durations from 1 s up, past the 30 days of ratelimits.limit, are accepted (Unkey sets no maximum)', async () => {
    const ns = await createNamespace(srv());
    for (const duration of [1_000, 2_592_000_000, 2_592_000_001, 10 ** 12, Number.MAX_SAFE_INTEGER]) {
      const data = expectOk(await call(srv(), 'ratelimits.setOverride', { namespace: ns, identifier: `d${duration}`, limit: 1, duration }));
      expect(expectOk(await call(srv(), 'ratelimits.getOverride', { namespace: ns, identifier: `d${duration}` }))).toEqual({ overrideId: data.overrideId, identifier: `d${duration}`, limit: 1, duration });
    }
  });

  it('an override longer than 30 days sets the window of the limit calls it matches', async () => {
    const ns = await createNamespace(srv());
    const year = 365 * 24 * H;
    const { overrideId } = expectOk(await call(srv(), 'ratelimits.setOverride', { namespace: ns, identifier: 'yearly', limit: 2, duration: year }));
    const first = await limitOk(srv(), { namespace: ns, identifier: 'yearly', limit: 100, duration: MIN });
    expect(first).toMatchObject({ success: true, limit: 2, remaining: 1, overrideId });
    expect(first.reset % year).toBe(0);
    expect(first.reset).toBeGreaterThan(Date.now());
    expect(first.reset).toBeLessThanOrEqual(Date.now() + year);
    await limitOk(srv(), { namespace: ns, identifier: 'yearly', limit: 100, duration: MIN });
    expect(await limitOk(srv(), { namespace: ns, identifier: 'yearly', limit: 100, duration: MIN })).toMatchObject({ success: false, remaining: 0 });
  });

  it('the namespace may be given by its rlns_ id; a wildcard and a 512-character identifier are accepted', async () => {
    const ns = await createNamespace(srv());
    const id = await namespaceIdOf(srv(), ns);
    const w = expectOk(await call(srv(), 'ratelimits.setOverride', { namespace: id, identifier: 'team_*', limit: 2, duration: MIN }));
    expect(await limitOk(srv(), { namespace: ns, identifier: 'team_a', limit: 100, duration: H })).toMatchObject({ limit: 2, overrideId: w.overrideId });
    const longId = 'L'.repeat(512);
    const l = expectOk(await call(srv(), 'ratelimits.setOverride', { namespace: ns, identifier: longId, limit: 1, duration: MIN }));
    expect(await limitOk(srv(), { namespace: ns, identifier: longId, limit: 100, duration: H })).toMatchObject({ limit: 1, overrideId: l.overrideId });
    expect(expectOk(await call(srv(), 'ratelimits.getOverride', { namespace: ns, identifier: longId }))).toMatchObject({ identifier: longId, overrideId: l.overrideId });
  });

  it('re-setting a deleted override makes it visible and effective again (with a new id)', async () => {
    const ns = await createNamespace(srv());
    const first = expectOk(await call(srv(), 'ratelimits.setOverride', { namespace: ns, identifier: 'r', limit: 2, duration: MIN }));
    expectOk(await call(srv(), 'ratelimits.deleteOverride', { namespace: ns, identifier: 'r' }));
    const second = expectOk(await call(srv(), 'ratelimits.setOverride', { namespace: ns, identifier: 'r', limit: 4, duration: MIN }));
    expect(second.overrideId).not.toBe(first.overrideId);
    expect(expectOk(await call(srv(), 'ratelimits.getOverride', { namespace: ns, identifier: 'r' }))).toMatchObject({ overrideId: second.overrideId, limit: 4 });
    const listed = expectOk(await call(srv(), 'ratelimits.listOverrides', { namespace: ns })) as { overrideId: string }[];
    expect(listed.map((o) => o.overrideId)).toEqual([second.overrideId]);
    expect(await limitOk(srv(), { namespace: ns, identifier: 'r', limit: 100, duration: H })).toMatchObject({ limit: 4, overrideId: second.overrideId });
  });
});
