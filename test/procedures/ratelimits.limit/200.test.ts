// ratelimits.limit 200: shape, counting, overrides, both path prefixes, the rlns_ id, restart.
// Contract: DESIGN.md §2 (Rate-limit algorithm; both ratelimits.* and ratelimit.* served),
// reference/unkey-v2.md §1.3 ratelimit.limit, §4.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { liveServer } from '../../helpers/live.js';
import { createNamespace, limitOk, LONG_WINDOW, MIN, namespaceIdOf, uniq } from '../../helpers/ratelimits.js';
import { call, expectOk, startServer } from '../../helpers/server.js';

const srv = liveServer();

describe('ratelimits.limit 200', () => {
  it('data is exactly {success, limit, remaining, reset}; reset is the absolute end of the current bucket', async () => {
    const before = Date.now();
    const res = await call(srv(), 'ratelimits.limit', { namespace: uniq(), identifier: 'user_1', limit: 3, duration: MIN });
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const data = expectOk(res);
    expect(Object.keys(data).sort()).toEqual(['limit', 'remaining', 'reset', 'success']);
    expect(data).toMatchObject({ success: true, limit: 3, remaining: 2 });
    expect(Number.isInteger(data.reset)).toBe(true);
    expect(data.reset % MIN).toBe(0);
    expect(data.reset).toBeGreaterThan(before);
    expect(data.reset).toBeLessThanOrEqual(Date.now() + MIN);
  });

  it('counts to the limit, then refuses with 200 success:false (cost defaults to 1)', async () => {
    const ns = uniq();
    const body = { namespace: ns, identifier: 'u', limit: 3, duration: 3_600_000 };
    const seen = [];
    for (let i = 0; i < 4; i++) seen.push(await limitOk(srv(), body));
    expect(seen.map((d) => [d.success, d.remaining])).toEqual([[true, 2], [true, 1], [true, 0], [false, 0]]);
    expect(new Set(seen.map((d) => d.reset)).size).toBe(1);
    // Another identifier in the namespace is independent.
    expect(await limitOk(srv(), { ...body, identifier: 'v' })).toMatchObject({ success: true, remaining: 2 });
  });

  it('cost: several units at once, 0 peeks without consuming, more than the limit is refused', async () => {
    const body = { namespace: uniq(), identifier: 'c', limit: 10, duration: 3_600_000 };
    expect(await limitOk(srv(), { ...body, cost: 4 })).toMatchObject({ success: true, remaining: 6 });
    expect(await limitOk(srv(), { ...body, cost: 0 })).toMatchObject({ success: true, remaining: 6 });
    expect(await limitOk(srv(), { ...body, cost: 0 })).toMatchObject({ success: true, remaining: 6 });
    expect(await limitOk(srv(), { ...body, cost: 7 })).toMatchObject({ success: false, remaining: 0 });
    expect(await limitOk(srv(), { ...body, cost: 6 })).toMatchObject({ success: true, remaining: 0 });
    expect(await limitOk(srv(), { namespace: body.namespace, identifier: 'big', limit: 10, duration: MIN, cost: 11 })).toMatchObject({ success: false, remaining: 0, limit: 10 });
  });

  it('an override replaces limit and duration and is reported as overrideId', async () => {
    const ns = await createNamespace(srv());
    const { overrideId } = expectOk(await call(srv(), 'ratelimits.setOverride', { namespace: ns, identifier: 'vip_*', limit: 2, duration: 1_000 }));
    const a = await limitOk(srv(), { namespace: ns, identifier: 'vip_1', limit: 100, duration: 3_600_000 });
    expect(a).toMatchObject({ success: true, limit: 2, remaining: 1, overrideId });
    expect(a.reset % 1_000).toBe(0);
    expect(a.reset).toBeLessThanOrEqual(Date.now() + 1_000);
    const other = await limitOk(srv(), { namespace: ns, identifier: 'plain', limit: 100, duration: 3_600_000 });
    expect(other).not.toHaveProperty('overrideId');
    expect(other.limit).toBe(100);
  });

  it('/v2/ratelimit.limit and /v2/ratelimits.limit share the same counters', async () => {
    const body = { namespace: uniq(), identifier: 'shared', limit: 4, duration: 3_600_000 };
    expect(await limitOk(srv(), body, 'ratelimit.limit')).toMatchObject({ success: true, remaining: 3 });
    expect(await limitOk(srv(), body, 'ratelimits.limit')).toMatchObject({ success: true, remaining: 2 });
    expect(await limitOk(srv(), { ...body, cost: 2 }, 'ratelimit.limit')).toMatchObject({ success: true, remaining: 0 });
    expect(await limitOk(srv(), body, 'ratelimits.limit')).toMatchObject({ success: false, remaining: 0 });
  });

  it('a namespace is addressable by its rlns_ id after creation (same counters, no new namespace)', async () => {
    const ns = uniq();
    // A long window: namespaceIdOf spawns the CLI between the counted calls.
    const body = { identifier: 'by-id', limit: 3, duration: LONG_WINDOW };
    await limitOk(srv(), { ...body, namespace: ns });
    const id = await namespaceIdOf(srv(), ns);
    expect(id).toMatch(/^rlns_/);
    expect(await limitOk(srv(), { ...body, namespace: id })).toMatchObject({ success: true, remaining: 1 });
    expect(await limitOk(srv(), { ...body, namespace: ns })).toMatchObject({ success: true, remaining: 0 });
    expect(await limitOk(srv(), { ...body, namespace: id }, 'ratelimit.limit')).toMatchObject({ success: false });
    // The id resolves to the same namespace for the override procedures too.
    const { overrideId } = expectOk(await call(srv(), 'ratelimits.setOverride', { namespace: id, identifier: 'o', limit: 9, duration: MIN }));
    expect(expectOk(await call(srv(), 'ratelimits.getOverride', { namespace: ns, identifier: 'o' })).overrideId).toBe(overrideId);
    expect(await namespaceIdOf(srv(), id)).toBe(id);
  });

  it('identifiers of any characters up to 512 (long ones hashed in storage) are counted separately', async () => {
    const ns = uniq();
    const ids = ['a'.repeat(512), `${'a'.repeat(511)}b`, 'é'.repeat(512), '😀'.repeat(256), 'with spaces / slashes * stars', 'ü'];
    for (const identifier of ids) {
      const body = { namespace: ns, identifier, limit: 1, duration: 3_600_000 };
      expect(await limitOk(srv(), body), identifier.slice(0, 10)).toMatchObject({ success: true, remaining: 0 });
      expect(await limitOk(srv(), body)).toMatchObject({ success: false });
    }
  });
});

describe('an identifier that reads like the stored digest of a long one', () => {
  // A long identifier is stored by '#' + base64(SHA-256(identifier)); the literal identifier
  // of that form is another identifier, with its own window, override and namespace.
  const long = 'L'.repeat(500);
  const digestForm = `#${createHash('sha256').update(long).digest('base64')}`;

  it('has a window of its own', async () => {
    const ns = uniq();
    for (const identifier of [long, digestForm, '#general']) {
      const body = { namespace: ns, identifier, limit: 1, duration: 3_600_000 };
      expect(await limitOk(srv(), body), identifier.slice(0, 10)).toMatchObject({ success: true, remaining: 0 });
      expect(await limitOk(srv(), body)).toMatchObject({ success: false });
    }
  });

  it('has an override of its own, and a namespace of that name is another namespace', async () => {
    const ns = await createNamespace(srv());
    const set = async (identifier: string, limit: number): Promise<string> => expectOk(await call(srv(), 'ratelimits.setOverride', { namespace: ns, identifier, limit, duration: 3_600_000 })).overrideId as string;
    const [a, b] = [await set(long, 3), await set(digestForm, 7)];
    expect(a).not.toBe(b);
    expect(await limitOk(srv(), { namespace: ns, identifier: long, limit: 100, duration: 3_600_000 })).toMatchObject({ limit: 3, overrideId: a });
    expect(await limitOk(srv(), { namespace: ns, identifier: digestForm, limit: 100, duration: 3_600_000 })).toMatchObject({ limit: 7, overrideId: b });
    const listed = expectOk(await call(srv(), 'ratelimits.listOverrides', { namespace: ns }));
    expect((listed as unknown as { identifier: string }[]).map((o) => o.identifier).sort()).toEqual([digestForm, long].sort());
    const longNs = `${uniq()}${'n'.repeat(460)}`;
    const digestNs = `#${createHash('sha256').update(longNs).digest('base64')}`;
    const idOf = async (namespace: string): Promise<string> => namespaceIdOf(srv(), namespace);
    await limitOk(srv(), { namespace: longNs, identifier: 'x', limit: 1, duration: 3_600_000 });
    await limitOk(srv(), { namespace: digestNs, identifier: 'x', limit: 1, duration: 3_600_000 });
    expect(await idOf(longNs)).not.toBe(await idOf(digestNs));
  });
});

describe('ratelimits.limit across a restart', () => {
  it('windows survive stop + start on the same data dir', async () => {
    const first = await startServer();
    // A long window: server restarts lie between the counted calls.
    const body = { namespace: uniq(), identifier: 'persist', limit: 5, duration: LONG_WINDOW };
    expect(await limitOk(first, { ...body, cost: 3 })).toMatchObject({ success: true, remaining: 2 });
    expect(await first.stop()).toBe(0);
    const second = await startServer({ dataDir: first.dataDir, rootKey: first.rootKey });
    expect(await limitOk(second, { ...body, cost: 0 })).toMatchObject({ success: true, remaining: 2 });
    expect(await limitOk(second, { ...body, cost: 2 })).toMatchObject({ success: true, remaining: 0 });
    expect(await limitOk(second, body)).toMatchObject({ success: false });
    // And after a kill -9: acknowledged increments are kept (DESIGN.md §1, durability=process).
    await second.stop('SIGKILL');
    const third = await startServer({ dataDir: first.dataDir, rootKey: first.rootKey });
    expect(await limitOk(third, { ...body, cost: 0 })).toMatchObject({ success: true, remaining: 0 });
    expect(await limitOk(third, body)).toMatchObject({ success: false });
    await third.stop();
  });
});
