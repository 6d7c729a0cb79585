// ratelimits.limit / multiLimit engine (native/src/limit.rs + window.rs) called in-process
// with a frozen clock, through the hot entries as the server calls them (request JSON and a
// context, test/helpers/engine.ts). Namespaces and overrides are written by the real store
// code (src/store/ratelimits.ts).
// Contract: DESIGN.md §2 "Rate-limit algorithm", reference/unkey-v2.md §4.1–4.3.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { contextBytes, hotCall, limitCall, multiLimitCall } from '../helpers/engine.js';
import { inBatch, tempStore } from '../helpers/tempStore.js';
import { Effect } from '../../src/engine/hotCalls.js';
import { errorCode, native } from '../../src/engine/native.js';
import { direct } from '../../src/store/db.js';
import { ensureNamespace, removeOverride, upsertOverride } from '../../src/store/ratelimits.js';
import type { NamespaceRecord } from '../../src/store/records.js';

const NATIVE_PATH = fileURLToPath(new URL('../../native/keyward.node', import.meta.url));

/** Records in the limiter's log (native/src/counterlog/): live windows and garbage. */
function logRecords(): number {
  return native.range('counter_log', '', null, 10_000_000).length / 2;
}

const WS = 'ws_limit_test';
/** 2026-01-15 12:00:00.000 UTC: aligned to every duration used below (≤ 1 h). */
const T0 = Date.UTC(2026, 0, 15, 12);
const MIN = 60_000;

/** ratelimits.limit's data. */
interface Outcome {
  success: boolean;
  limit: number;
  remaining: number;
  reset: number;
  overrideId?: string;
}

const store = tempStore('keyward-limit-', 0, 0);

let seq = 0;
/** A fresh namespace per test (windows and overrides never collide between tests). */
function freshNs(): NamespaceRecord {
  const name = `ns-${++seq}-${Math.random().toString(36).slice(2)}`;
  return direct.transact(() => ensureNamespace(WS, name, T0));
}

/** ratelimits.limit in namespace `ns` (its id) of WS. Group commit is off: a call that wrote committed. */
function lim(ns: string, id: string, limit: number, duration: number, cost: number, now: number): { wrote: boolean; out: Outcome } {
  const answer = limitCall(WS, { namespace: ns, identifier: id, limit, duration, cost }, now);
  expect([Effect.None, Effect.Wrote]).toContain(answer.effect);
  return { wrote: answer.wrote, out: answer.data as Outcome };
}

interface Req {
  ns: string;
  id: string;
  limit: number;
  duration: number;
  cost: number;
}

/**
 * ratelimits.multiLimit: each item's outcome in the form of limit's (`passed` as `success`),
 * once the answer's own fields are checked (the namespace and identifier of each item echoed
 * as the request named them, `passed` overall when every item passed).
 */
function many(reqs: Req[], now: number): { wrote: boolean; out: Outcome[] } {
  const answer = multiLimitCall(WS, reqs.map((r) => ({ namespace: r.ns, identifier: r.id, limit: r.limit, duration: r.duration, cost: r.cost })), now);
  expect([Effect.None, Effect.Wrote]).toContain(answer.effect);
  const limits = answer.data.limits as (Omit<Outcome, 'success'> & { namespace: string; identifier: string; passed: boolean })[];
  expect(limits.map((l) => [l.namespace, l.identifier])).toEqual(reqs.map((r) => [r.ns, r.id]));
  expect(answer.data.passed).toBe(limits.every((l) => l.passed));
  expect(Object.keys(answer.data).sort()).toEqual(['limits', 'passed']);
  const out = limits.map(({ namespace: _n, identifier: _i, passed, ...rest }) => ({ success: passed, ...rest }));
  return { wrote: answer.wrote, out };
}

describe('sliding window', () => {
  it('admits up to the limit in a bucket; reset is the end of the epoch-aligned bucket', () => {
    const ns = freshNs().id;
    const mid = T0 + 25_000; // inside bucket [T0, T0+60s)
    for (let i = 0; i < 10; i++) {
      const { wrote, out } = lim(ns, 'u', 10, MIN, 1, mid + i);
      expect(out).toEqual({ success: true, limit: 10, remaining: 9 - i, reset: T0 + MIN });
      expect(wrote).toBe(true);
    }
    const refused = lim(ns, 'u', 10, MIN, 1, T0 + MIN - 1);
    expect(refused.out).toEqual({ success: false, limit: 10, remaining: 0, reset: T0 + MIN });
    expect(refused.wrote).toBe(false);
    expect(refused.out).not.toHaveProperty('overrideId');
  });

  it('the bucket boundary belongs to the next bucket (reset moves at exactly seq·duration)', () => {
    const ns = freshNs().id;
    expect(lim(ns, 'b', 5, 1_000, 1, T0 + 999).out.reset).toBe(T0 + 1_000);
    expect(lim(ns, 'b', 5, 1_000, 1, T0 + 1_000).out.reset).toBe(T0 + 2_000);
    // An unaligned duration: buckets are aligned to the epoch, not to the first call.
    const d = 7_000;
    const now = T0 + 12_345;
    const r = lim(ns, 'odd', 5, d, 1, now).out;
    expect(r.reset).toBe((Math.floor(now / d) + 1) * d);
    expect(r.reset % d).toBe(0);
  });

  it('the previous bucket counts weighted by what is left of the window', () => {
    const ns = freshNs().id;
    const d = 10_000;
    expect(lim(ns, 'w', 10, d, 10, T0 + 5_000).out).toMatchObject({ success: true, remaining: 0 });
    // Start of the next bucket: the previous one still counts fully.
    expect(lim(ns, 'w', 10, d, 1, T0 + d).out.success).toBe(false);
    // 25% in: floor(10 · 0.75) = 7 → exactly 3 fit.
    const at = T0 + d + 2_500;
    for (let i = 0; i < 3; i++) expect(lim(ns, 'w', 10, d, 1, at).out).toMatchObject({ success: true, remaining: 2 - i, reset: T0 + 2 * d });
    expect(lim(ns, 'w', 10, d, 1, at).out).toEqual({ success: false, limit: 10, remaining: 0, reset: T0 + 2 * d });
    // 50% in: floor(10 · 0.5) = 5 and 3 used → 2 more fit.
    expect(lim(ns, 'w', 10, d, 2, T0 + d + 5_000).out).toMatchObject({ success: true, remaining: 0 });
    expect(lim(ns, 'w', 10, d, 1, T0 + d + 5_000).out.success).toBe(false);
    // Two buckets later bucket n no longer counts; bucket n+1 (5 used) weighs 5 · 1.0 at its end.
    expect(lim(ns, 'w', 10, d, 5, T0 + 2 * d).out).toMatchObject({ success: true, remaining: 0 });
    // Three buckets later nothing counts.
    expect(lim(ns, 'w', 10, d, 10, T0 + 4 * d).out).toMatchObject({ success: true, remaining: 0 });
  });

  it('cost 0 peeks: succeeds without consuming, refused when already over', () => {
    const ns = freshNs().id;
    lim(ns, 'p', 10, MIN, 4, T0);
    const peek = lim(ns, 'p', 10, MIN, 0, T0 + 1);
    expect(peek.out).toEqual({ success: true, limit: 10, remaining: 6, reset: T0 + MIN });
    expect(peek.wrote).toBe(false);
    expect(lim(ns, 'p', 10, MIN, 0, T0 + 2).out.remaining).toBe(6);
    lim(ns, 'p', 10, MIN, 6, T0 + 3);
    // At the limit exactly: a peek still succeeds with nothing left.
    expect(lim(ns, 'p', 10, MIN, 0, T0 + 4).out).toMatchObject({ success: true, remaining: 0 });
    // Over the (now lower) limit: the peek is refused.
    expect(lim(ns, 'p', 5, MIN, 0, T0 + 5).out).toMatchObject({ success: false, remaining: 0, limit: 5 });
  });

  it('a cost larger than the limit is refused and consumes nothing', () => {
    const ns = freshNs().id;
    const big = lim(ns, 'c', 10, MIN, 11, T0);
    expect(big.out).toEqual({ success: false, limit: 10, remaining: 0, reset: T0 + MIN });
    expect(big.wrote).toBe(false);
    expect(lim(ns, 'c', 10, MIN, 10, T0).out).toMatchObject({ success: true, remaining: 0 });
  });

  it('identifiers are independent within a namespace, and namespaces are independent', () => {
    const a = freshNs().id;
    const b = freshNs().id;
    expect(lim(a, 'x', 1, MIN, 1, T0).out.success).toBe(true);
    expect(lim(a, 'x', 1, MIN, 1, T0).out.success).toBe(false);
    expect(lim(a, 'y', 1, MIN, 1, T0).out.success).toBe(true);
    expect(lim(b, 'x', 1, MIN, 1, T0).out.success).toBe(true);
  });

  // reference/unkey-v2.md §4.1: windows are keyed by (namespace, identifier, duration, seq),
  // so interleaving two durations for one identifier must not reset either window.
  it('windows of different durations for one identifier do not reset each other', () => {
    const ns = freshNs().id;
    expect(lim(ns, 'dual', 1, MIN, 1, T0).out.success).toBe(true);
    expect(lim(ns, 'dual', 1, 1_000, 1, T0).out.success).toBe(true);
    // The 1-per-minute window is already used up.
    expect(lim(ns, 'dual', 1, MIN, 1, T0 + 10).out.success).toBe(false);
  });
});

describe('namespaces: by name or id, in the workspace and the scope', () => {
  it('a namespace named by its name or by its id counts in one window, and is echoed as named', () => {
    const ns = freshNs();
    expect(limitCall(WS, { namespace: ns.name, identifier: 'n', limit: 3, duration: MIN }, T0).data).toEqual({ success: true, limit: 3, remaining: 2, reset: T0 + MIN });
    expect(lim(ns.id, 'n', 3, MIN, 1, T0).out.remaining).toBe(1);
    const both = multiLimitCall(WS, [
      { namespace: ns.name, identifier: 'n', limit: 3, duration: MIN, cost: 0 },
      { namespace: ns.id, identifier: 'n', limit: 3, duration: MIN, cost: 0 },
    ], T0);
    expect(both.data).toEqual({
      passed: true,
      limits: [
        { namespace: ns.name, identifier: 'n', limit: 3, remaining: 1, reset: T0 + MIN, passed: true },
        { namespace: ns.id, identifier: 'n', limit: 3, remaining: 1, reset: T0 + MIN, passed: true },
      ],
    });
  });

  it('a namespace the workspace lacks, or the scope excludes, is declined with nothing consumed', () => {
    const ns = freshNs();
    const other = direct.transact(() => ensureNamespace('ws_limit_other', 'theirs', T0));
    const body = (namespace: string) => ({ namespace, identifier: 'd', limit: 5, duration: MIN });
    for (const [namespace, scope] of [
      ['never-created', '*'],
      ['rlns_never_created', '*'],
      [other.id, '*'],
      [other.name, '*'],
      [ns.name, 'rlns_other'],
      [ns.id, `rlns_other\n${ns.id}x`],
    ] as const) {
      expect(hotCall(native.limit, WS, body(namespace), T0, { scope }), `${namespace} in ${scope}`).toBeUndefined();
      // A multiLimit with one such item is declined whole.
      expect(hotCall(native.multiLimit, WS, [body(ns.id), body(namespace)], T0, { scope }), `${namespace} in ${scope}`).toBeUndefined();
    }
    expect(limitCall(WS, body(ns.name), T0, { scope: `rlns_other\n${ns.id}` }).data.remaining).toBe(4);
    expect(lim(ns.id, 'd', 5, MIN, 0, T0).out.remaining).toBe(4);
    // The other workspace's namespace is there for its own workspace.
    expect(limitCall('ws_limit_other', body(other.id), T0).data.remaining).toBe(4);
  });
});

describe('overrides', () => {
  it("an override's limit and duration replace the request's; overrideId is reported", () => {
    const ns = freshNs();
    const o = direct.transact(() => upsertOverride(ns, 'vip', 3, 1_000, T0));
    const first = lim(ns.id, 'vip', 100, MIN, 1, T0 + 500);
    expect(first.out).toEqual({ success: true, limit: 3, remaining: 2, reset: T0 + 1_000, overrideId: o.id });
    lim(ns.id, 'vip', 100, MIN, 2, T0 + 500);
    expect(lim(ns.id, 'vip', 100, MIN, 1, T0 + 600).out).toEqual({ success: false, limit: 3, remaining: 0, reset: T0 + 1_000, overrideId: o.id });
    // The override's 1 s duration: 2 s later everything fits again.
    expect(lim(ns.id, 'vip', 100, MIN, 3, T0 + 2_000).out).toMatchObject({ success: true, remaining: 0, reset: T0 + 3_000 });
    // Others in the namespace keep the request's limit.
    expect(lim(ns.id, 'other', 100, MIN, 1, T0).out).toEqual({ success: true, limit: 100, remaining: 99, reset: T0 + MIN });
  });

  it('exact beats wildcard; the longest matching wildcard wins', () => {
    const ns = freshNs();
    const star = direct.transact(() => upsertOverride(ns, '*', 1, MIN, T0));
    const user = direct.transact(() => upsertOverride(ns, 'user_*', 2, MIN, T0));
    const premium = direct.transact(() => upsertOverride(ns, 'user_premium_*', 50, MIN, T0));
    const exact = direct.transact(() => upsertOverride(ns, 'user_premium_42', 7, MIN, T0));
    expect(lim(ns.id, 'user_premium_42', 1000, MIN, 1, T0).out).toMatchObject({ limit: 7, overrideId: exact.id });
    expect(lim(ns.id, 'user_premium_43', 1000, MIN, 1, T0).out).toMatchObject({ limit: 50, overrideId: premium.id });
    expect(lim(ns.id, 'user_basic_1', 1000, MIN, 1, T0).out).toMatchObject({ limit: 2, overrideId: user.id });
    expect(lim(ns.id, 'anonymous', 1000, MIN, 1, T0).out).toMatchObject({ limit: 1, overrideId: star.id });
    // The same resolution is what findOverride (getOverride) reports.
    expect(JSON.parse(native.findOverride(ns.id, 'user_premium_43') ?? 'null')).toEqual({ overrideId: premium.id, identifier: 'user_premium_*', limit: 50, duration: MIN });
    expect(JSON.parse(native.findOverride(ns.id, 'user_premium_42') ?? 'null')).toMatchObject({ overrideId: exact.id, identifier: 'user_premium_42' });
    // A pattern in the middle.
    const mid = freshNs();
    const a = direct.transact(() => upsertOverride(mid, 'a*z', 4, MIN, T0));
    expect(lim(mid.id, 'abcz', 1000, MIN, 1, T0).out).toMatchObject({ limit: 4, overrideId: a.id });
    expect(lim(mid.id, 'abcza', 1000, MIN, 1, T0).out).not.toHaveProperty('overrideId');
  });

  it('an upsert keeps the id and changes the limit at once', () => {
    const ns = freshNs();
    const first = direct.transact(() => upsertOverride(ns, 'u', 1, MIN, T0));
    const again = direct.transact(() => upsertOverride(ns, 'u', 5, MIN, T0 + 1));
    expect(again.id).toBe(first.id);
    expect(lim(ns.id, 'u', 1000, MIN, 1, T0).out).toMatchObject({ limit: 5, remaining: 4, overrideId: first.id });
  });

  it('a limit-0 override refuses everything, cost 0 included', () => {
    const ns = freshNs();
    const o = direct.transact(() => upsertOverride(ns, 'banned_*', 0, MIN, T0));
    for (const cost of [1, 0]) {
      const r = lim(ns.id, 'banned_1', 100, MIN, cost, T0);
      expect(r.out).toEqual({ success: false, limit: 0, remaining: 0, reset: T0 + MIN, overrideId: o.id });
      expect(r.wrote).toBe(false);
    }
  });

  it('a deleted override no longer applies on the very next call', () => {
    const ns = freshNs();
    direct.transact(() => upsertOverride(ns, 'd', 1, MIN, T0));
    expect(lim(ns.id, 'd', 100, MIN, 1, T0).out).toMatchObject({ success: true, limit: 1 });
    expect(lim(ns.id, 'd', 100, MIN, 1, T0).out).toMatchObject({ success: false, limit: 1 });
    expect(direct.transact(() => removeOverride(ns, 'd'))).toBe(true);
    const after = lim(ns.id, 'd', 100, MIN, 1, T0 + 1);
    expect(after.out).toMatchObject({ success: true, limit: 100, remaining: 98 });
    expect(after.out).not.toHaveProperty('overrideId');
    expect(native.findOverride(ns.id, 'd')).toBeUndefined();
    expect(direct.transact(() => removeOverride(ns, 'd'))).toBe(false);
    // A deleted wildcard too.
    direct.transact(() => upsertOverride(ns, 'w*', 1, MIN, T0));
    expect(lim(ns.id, 'w1', 100, MIN, 1, T0).out.limit).toBe(1);
    direct.transact(() => removeOverride(ns, 'w*'));
    expect(lim(ns.id, 'w1', 100, MIN, 1, T0).out).toMatchObject({ success: true, limit: 100 });
  });
});

describe('overrides appearing where calls found none', () => {
  // Whether a namespace has overrides is kept per records epoch (native/src/limit.rs
  // has_overrides): an override set here or by another process applies on the very next
  // call, inside a turn's batch too.
  it('set by this process, then by another one between batches', () => {
    const ns = freshNs();
    expect(lim(ns.id, 'late', 100, MIN, 1, T0).out).not.toHaveProperty('overrideId');
    const here = direct.transact(() => upsertOverride(ns, 'late', 2, MIN, T0));
    expect(lim(ns.id, 'late', 100, MIN, 1, T0).out).toMatchObject({ limit: 2, remaining: 0, overrideId: here.id });
    // The override's stored bytes, for the other process to write back after its removal.
    const [key, value] = native.range('ratelimit_overrides', `${ns.id}/`, `${ns.id}0`, 10);
    expect(direct.transact(() => removeOverride(ns, 'late'))).toBe(true);
    expect(inBatch(() => [lim(ns.id, 'late', 100, MIN, 1, T0).out, lim(ns.id, 'late', 100, MIN, 1, T0).out])).toEqual([
      { success: true, limit: 100, remaining: 97, reset: T0 + MIN },
      { success: true, limit: 100, remaining: 96, reset: T0 + MIN },
    ]);
    const child = spawnSync(process.execPath, ['-e', `
      const native = require(${JSON.stringify(NATIVE_PATH)});
      native.open(${JSON.stringify(store.dir())}, false, 0, 0);
      native.transaction(() => native.put('ratelimit_overrides', Buffer.from('${(key as Buffer).toString('base64')}', 'base64'), Buffer.from('${(value as Buffer).toString('base64')}', 'base64')));
      native.close();
    `], { encoding: 'utf8' });
    expect(child.stderr).toBe('');
    expect(child.status).toBe(0);
    expect(inBatch(() => lim(ns.id, 'late', 100, MIN, 0, T0).out)).toEqual({ success: false, limit: 2, remaining: 0, reset: T0 + MIN, overrideId: here.id });
  });
});

describe('long identifiers (hashed storage past 440 bytes)', () => {
  const long = (c: string, n: number): string => c.repeat(n);

  it('limit works around and past the 440-byte boundary, with distinct windows', () => {
    const ns = freshNs().id;
    for (const id of [long('a', 440), long('a', 441), long('a', 512), `${long('a', 511)}b`, long('é', 512), long('😀', 300)]) {
      expect(lim(ns, id, 2, MIN, 1, T0).out, `${id.length} chars`).toMatchObject({ success: true, remaining: 1 });
      expect(lim(ns, id, 2, MIN, 1, T0).out).toMatchObject({ success: true, remaining: 0 });
      expect(lim(ns, id, 2, MIN, 1, T0).out.success).toBe(false);
    }
  });

  it('an override for a long identifier applies (exact and by pattern) and can be removed', () => {
    const ns = freshNs();
    const id = long('k', 500);
    const o = direct.transact(() => upsertOverride(ns, id, 1, MIN, T0));
    expect(lim(ns.id, id, 100, MIN, 1, T0).out).toMatchObject({ success: true, limit: 1, overrideId: o.id });
    expect(lim(ns.id, id, 100, MIN, 1, T0).out).toMatchObject({ success: false, overrideId: o.id });
    expect(lim(ns.id, `${id}x`, 100, MIN, 1, T0).out).not.toHaveProperty('overrideId');
    expect(JSON.parse(native.findOverride(ns.id, id) ?? 'null')).toMatchObject({ overrideId: o.id, identifier: id });
    expect(direct.transact(() => removeOverride(ns, id))).toBe(true);
    expect(lim(ns.id, id, 100, MIN, 1, T0).out).toMatchObject({ success: true, limit: 100 });
    const pattern = `${long('p', 460)}*`;
    const w = direct.transact(() => upsertOverride(ns, pattern, 2, MIN, T0));
    expect(lim(ns.id, `${long('p', 470)}tail`, 100, MIN, 1, T0).out).toMatchObject({ limit: 2, overrideId: w.id });
  });
});

describe('multiLimit', () => {
  it('all admitted: every window consumes, results in request order', () => {
    const ns = freshNs().id;
    const { wrote, out } = many([
      { ns, id: 'a', limit: 5, duration: MIN, cost: 2 },
      { ns, id: 'b', limit: 3, duration: 1_000, cost: 1 },
    ], T0);
    expect(wrote).toBe(true);
    expect(out).toEqual([
      { success: true, limit: 5, remaining: 3, reset: T0 + MIN },
      { success: true, limit: 3, remaining: 2, reset: T0 + 1_000 },
    ]);
    expect(lim(ns, 'a', 5, MIN, 0, T0).out.remaining).toBe(3);
    expect(lim(ns, 'b', 3, 1_000, 0, T0).out.remaining).toBe(2);
  });

  it('one refusal: nothing consumed anywhere; passing items report remaining with their cost added back', () => {
    const ns = freshNs().id;
    lim(ns, 'full', 1, MIN, 1, T0);
    lim(ns, 'half', 10, MIN, 5, T0);
    const { wrote, out } = many([
      { ns, id: 'fresh', limit: 10, duration: MIN, cost: 3 },
      { ns, id: 'full', limit: 1, duration: MIN, cost: 1 },
      { ns, id: 'half', limit: 10, duration: MIN, cost: 2 },
    ], T0 + 1);
    expect(wrote).toBe(false);
    expect(out).toEqual([
      { success: true, limit: 10, remaining: 10, reset: T0 + MIN },
      { success: false, limit: 1, remaining: 0, reset: T0 + MIN },
      { success: true, limit: 10, remaining: 5, reset: T0 + MIN },
    ]);
    expect(lim(ns, 'fresh', 10, MIN, 0, T0 + 2).out.remaining).toBe(10);
    expect(lim(ns, 'half', 10, MIN, 0, T0 + 2).out.remaining).toBe(5);
  });

  it('one window named twice in a call: each item is decided with both costs added (Unkey: every limit on the post-increment values)', () => {
    const ns = freshNs().id;
    const over = many([
      { ns, id: 's', limit: 10, duration: MIN, cost: 6 },
      { ns, id: 's', limit: 10, duration: MIN, cost: 6 },
    ], T0);
    expect(over.wrote).toBe(false);
    expect(over.out.map((o) => o.success)).toEqual([false, false]);
    expect(lim(ns, 's', 10, MIN, 0, T0).out.remaining).toBe(10);
    const ok = many([
      { ns, id: 's', limit: 10, duration: MIN, cost: 4 },
      { ns, id: 's', limit: 10, duration: MIN, cost: 6 },
    ], T0);
    expect(ok.out).toEqual([
      { success: true, limit: 10, remaining: 0, reset: T0 + MIN },
      { success: true, limit: 10, remaining: 0, reset: T0 + MIN },
    ]);
    expect(lim(ns, 's', 10, MIN, 0, T0).out.remaining).toBe(0);
    // Different limits on one window: the tighter one sees the looser one's cost too, and
    // the item that would pass reports its capacity with its own cost given back.
    const mixed = many([
      { ns, id: 't', limit: 1, duration: MIN, cost: 1 },
      { ns, id: 't', limit: 10, duration: MIN, cost: 1 },
    ], T0);
    expect(mixed.wrote).toBe(false);
    expect(mixed.out).toEqual([
      { success: false, limit: 1, remaining: 0, reset: T0 + MIN },
      { success: true, limit: 10, remaining: 9, reset: T0 + MIN },
    ]);
    expect(lim(ns, 't', 10, MIN, 0, T0).out.remaining).toBe(10);
  });

  it('overrides apply per item, across namespaces, and a limit-0 override sinks the batch', () => {
    const a = freshNs();
    const b = freshNs();
    const oa = direct.transact(() => upsertOverride(a, 'x', 2, 1_000, T0));
    const ob = direct.transact(() => upsertOverride(b, 'blocked', 0, MIN, T0));
    const first = many([
      { ns: a.id, id: 'x', limit: 100, duration: MIN, cost: 1 },
      { ns: b.id, id: 'x', limit: 100, duration: MIN, cost: 1 },
    ], T0);
    expect(first.out).toEqual([
      { success: true, limit: 2, remaining: 1, reset: T0 + 1_000, overrideId: oa.id },
      { success: true, limit: 100, remaining: 99, reset: T0 + MIN },
    ]);
    const blocked = many([
      { ns: a.id, id: 'x', limit: 100, duration: MIN, cost: 1 },
      { ns: b.id, id: 'blocked', limit: 100, duration: MIN, cost: 1 },
    ], T0);
    expect(blocked.wrote).toBe(false);
    expect(blocked.out).toEqual([
      { success: true, limit: 2, remaining: 1, reset: T0 + 1_000, overrideId: oa.id },
      { success: false, limit: 0, remaining: 0, reset: T0 + MIN, overrideId: ob.id },
    ]);
  });

  it('a truncated body is declined, having done nothing; as the full way\'s (validated) bytes it is a clear error', () => {
    const ns = freshNs().id;
    const body = JSON.stringify([{ namespace: ns, identifier: 'i', limit: 1, duration: MIN, cost: 1 }]);
    const truncated = body.slice(0, body.length - 3);
    expect(hotCall(native.multiLimit, WS, truncated, T0)).toBeUndefined();
    let thrown: unknown;
    expect(() => {
      try {
        hotCall(native.multiLimit, WS, truncated, T0, { validated: true });
      } catch (err) {
        thrown = err;
        throw err;
      }
    }).toThrow(/declined a request the full way validated/);
    expect(errorCode(thrown)).toBe('ENGINE_DECLINED');
    expect(lim(ns, 'i', 1, MIN, 0, T0).out).toEqual({ success: true, limit: 1, remaining: 1, reset: T0 + MIN });
  });
});

describe('persistence and sweeping', () => {
  it('windows survive close() + open() of the store', () => {
    const ns = freshNs().id;
    expect(lim(ns, 'r', 5, MIN, 3, T0).out.remaining).toBe(2);
    native.close();
    native.open(store.dir(), false, 0, 0);
    expect(lim(ns, 'r', 5, MIN, 0, T0 + 1).out.remaining).toBe(2);
    expect(lim(ns, 'r', 5, MIN, 2, T0 + 2).out).toMatchObject({ success: true, remaining: 0 });
    expect(lim(ns, 'r', 5, MIN, 1, T0 + 3).out.success).toBe(false);
  });

  it('sweepLog deletes windows whose last bucket is over and keeps live ones', () => {
    const ns = freshNs().id;
    const d = 10_000;
    const now = T0 + 100 * d + 5_000; // inside bucket 100 (relative to T0)
    lim(ns, 'stale', 10, d, 1, now - 2 * d); // bucket 98: over once bucket 99 ended
    lim(ns, 'stale2', 10, d, 1, now - 50 * d);
    lim(ns, 'prev', 10, d, 1, now - d); // bucket 99: still weighs in bucket 100
    lim(ns, 'cur', 10, d, 1, now); // bucket 100
    expect(logRecords()).toBeGreaterThanOrEqual(4);

    // Small steps: the log keeps the place from call to call. Two ends reached = every
    // record visited at least once.
    const sweep = (at: number, max: number): number => {
      let deleted = 0;
      for (let ends = 0, step = 0; ends < 2 && step < 100_000; step++) {
        const [n, atEnd] = native.sweepLog(at, max);
        deleted += n;
        if (atEnd) ends++;
      }
      return deleted;
    };
    const before = logRecords();
    const deleted = sweep(now, 3);
    expect(deleted).toBeGreaterThanOrEqual(2);
    expect(logRecords()).toBe(before - deleted);
    // The stale ones are gone: 'stale' counts from zero again even in its old bucket.
    expect(lim(ns, 'stale', 10, d, 0, now - 2 * d).out.remaining).toBe(10);
    expect(lim(ns, 'stale2', 10, d, 0, now - 50 * d).out.remaining).toBe(10);
    // What is left still counts.
    expect(lim(ns, 'cur', 10, d, 0, now).out.remaining).toBe(9);
    expect(lim(ns, 'prev', 10, d, 0, now).out.remaining).toBe(10); // floor(1 · 0.5) = 0
    expect(lim(ns, 'prev', 10, d, 0, now - d).out.remaining).toBe(9); // still stored
    // Later still, the rest of this namespace's windows go too.
    const later = now + 10 * d;
    const left = logRecords();
    const deletedLater = sweep(later, 1_000);
    expect(deletedLater).toBeGreaterThanOrEqual(2);
    expect(logRecords()).toBe(left - deletedLater);
    expect(lim(ns, 'cur', 10, d, 0, now).out.remaining).toBe(10);
  });

  it('commits delete the windows stale at the time their calls decided, with no sweep: new identifiers do not grow the log', () => {
    const ns = freshNs().id;
    const d = 1_000;
    const before = logRecords();
    // 5,000 identifiers called once each, each call its own commit: 5,000 live windows.
    for (let i = 0; i < 5_000; i++) lim(ns, `once_${i}`, 10, d, 1, T0 + 1);
    expect(logRecords() - before).toBeGreaterThanOrEqual(5_000);
    // 10 s later, 5,000 new ones: their commits' visits (3 per append) go round the whole
    // log and delete the first 5,000, stale by then.
    for (let i = 0; i < 5_000; i++) lim(ns, `later_${i}`, 10, d, 1, T0 + 10_000);
    expect(logRecords() - before).toBeLessThanOrEqual(5_000 + 64 * 3);
    expect(lim(ns, 'later_4999', 10, d, 0, T0 + 10_000).out.remaining).toBe(9);
    // A deleted window reads as none, as the stale one read.
    expect(lim(ns, 'once_0', 10, d, 0, T0 + 10_000).out.remaining).toBe(10);
    // Leave the log as it was for the tests that count records after this one.
    for (let ends = 0; ends < 2; ) if (native.sweepLog(T0 + 13_000, 100_000)[1]) ends++;
    expect(logRecords()).toBeLessThanOrEqual(before);
  });

  it('the log keeps about one record per window however often windows change', () => {
    const ns = freshNs().id;
    const before = logRecords();
    // 5,000 admitted calls over 50 identifiers, each call its own commit: 5,000 appends.
    for (let i = 0; i < 5_000; i++) lim(ns, `u${i % 50}`, 1_000, MIN, 1, T0 + 1);
    // Each commit deletes the superseded records among the next ones it visits, so what is
    // left beyond the 50 live windows is a fraction of them, not the 4,950 superseded.
    expect(logRecords() - before).toBeLessThan(50 * 3);
    for (let i = 0; i < 50; i++) expect(lim(ns, `u${i}`, 1_000, MIN, 0, T0 + 2).out.remaining).toBe(900);
    // Calls committed together (the server's group commit) on one window add one record.
    const inOne = logRecords();
    native.batchBegin();
    for (let i = 0; i < 200; i++) lim(ns, 'hot', 1_000, MIN, 1, T0 + 3);
    expect(native.batchCommit()).toBe(true);
    expect(logRecords() - inOne).toBeLessThanOrEqual(1);
    expect(lim(ns, 'hot', 1_000, MIN, 0, T0 + 4).out.remaining).toBe(800);
  });

  it('windows another process changed count here at once', () => {
    const ns = freshNs().id;
    expect(lim(ns, 'shared', 10, MIN, 2, T0).out.remaining).toBe(8);
    // Another process opens the same store and admits 3 more on the same window.
    const child = spawnSync(process.execPath, ['-e', `
      const native = require(${JSON.stringify(NATIVE_PATH)});
      native.open(${JSON.stringify(store.dir())}, false, 0, 0);
      const request = Buffer.from(${JSON.stringify(JSON.stringify({ namespace: ns, identifier: 'shared', limit: 10, duration: MIN, cost: 1 }))});
      const context = Buffer.from('${contextBytes(WS, T0 + 1).toString('base64')}', 'base64');
      for (let i = 0; i < 3; i++) if (!native.limit(request, context)) throw new Error('declined');
      native.close();
    `], { encoding: 'utf8' });
    expect(child.stderr).toBe('');
    expect(child.status).toBe(0);
    expect(lim(ns, 'shared', 10, MIN, 0, T0 + 2).out.remaining).toBe(5);
    expect(lim(ns, 'shared', 10, MIN, 5, T0 + 2).out).toMatchObject({ success: true, remaining: 0 });
    expect(lim(ns, 'shared', 10, MIN, 1, T0 + 2).out.success).toBe(false);
  });
});
