// keys.verifyKey's engine (native/src/verify.rs) called in-process with frozen and advanced
// time, over keys created by the real management handlers. Contract: DESIGN.md §2
// ("Verification codes and order", "Credits", "Refill", "Key rate limits", "Rate-limit
// algorithm", "Permission query"), reference/unkey-v2.md §3.2 (fields per outcome) and the
// spec's "States and transitions" table.
import { describe, expect, it } from 'vitest';
import { hotCall, verifyCall, type Data } from '../helpers/engine.js';
import { tempStore } from '../helpers/tempStore.js';
import { Principal } from '../../src/auth/permissions.js';
import { Effect } from '../../src/engine/hotCalls.js';
import { native } from '../../src/engine/native.js';
import { createApi } from '../../src/procedures/apis/createApi.js';
import { updateIdentity } from '../../src/procedures/identities/updateIdentity.js';
import { createKey, type CreateKeyInput } from '../../src/procedures/keys/createKey.js';
import { deleteKey } from '../../src/procedures/keys/deleteKey.js';
import { getKey } from '../../src/procedures/keys/getKey.js';
import { updateCredits } from '../../src/procedures/keys/updateCredits.js';
import { updateKey } from '../../src/procedures/keys/updateKey.js';
import { createRole } from '../../src/procedures/permissions/createRole.js';
import { deletePermission } from '../../src/procedures/permissions/deletePermission.js';
import { deleteRole } from '../../src/procedures/permissions/deleteRole.js';
import type { Ctx } from '../../src/request/context.js';
import { directCtx } from '../../src/request/direct.js';
import { markApiDeleted } from '../../src/store/apis.js';
import { direct } from '../../src/store/db.js';

const WS = 'ws_verify_test';
const OTHER_WS = 'ws_verify_other';
/** 2026-01-15 12:00:00.000 UTC: aligned to every window duration used below (≤ 1 h). */
const T0 = Date.UTC(2026, 0, 15, 12);
const MIN = 60_000;

tempStore('keyward-verify-', 100);

function ctx(nowMs = T0, ws = WS): Ctx {
  return directCtx(new Principal(ws, 'rk_test', ['*']), nowMs);
}

async function newApi(ws = WS): Promise<string> {
  return (await createApi({ name: 'verify-test' }, ctx(T0, ws))).apiId;
}

type KeyOpts = Partial<CreateKeyInput> & { now?: number; ws?: string };

async function newKey(opts: KeyOpts = {}): Promise<{ keyId: string; key: string; apiId: string }> {
  const { now = T0, ws = WS, ...rest } = opts;
  const apiId = rest.apiId ?? await newApi(ws);
  const created = await createKey({ byteLength: 16, enabled: true, recoverable: false, ...rest, apiId }, ctx(now, ws));
  return { ...created, apiId };
}

interface VerifyOpts {
  cost?: number;
  query?: string;
  /** [name, cost] for a stored limit, [name, cost, limit, durationMs] for an ad-hoc one. */
  named?: ([string, number] | [string, number, number, number])[];
  now?: number;
  ws?: string;
  apis?: string;
}

/** The request body of keys.verifyKey for these options (no `credits`: the default cost). */
function verifyBody(key: string, o: VerifyOpts): Data {
  const body: Data = { key };
  if (o.cost !== undefined) body.credits = { cost: o.cost };
  if (o.query !== undefined) body.permissions = o.query;
  if (o.named !== undefined) body.ratelimits = o.named.map(([name, cost, limit, duration]) => (limit === undefined ? { name, cost } : { name, cost, limit, duration }));
  return body;
}

function verifyRaw(key: string, o: VerifyOpts = {}): { wrote: boolean; data: Data } {
  const answer = verifyCall(o.ws ?? WS, verifyBody(key, o), o.now ?? T0, { scope: o.apis ?? '*' });
  // Group commit is off: a call that wrote committed (never opened a batch).
  expect([Effect.None, Effect.Wrote], `effect of ${answer.envelope}`).toContain(answer.effect);
  return { wrote: answer.wrote, data: answer.data };
}

function verify(key: string, o: VerifyOpts = {}): Data {
  return verifyRaw(key, o).data;
}

/** The engine declined the body (not one the schema accepts: the full way answers the 400). */
function declined(key: string, o: VerifyOpts = {}): boolean {
  return hotCall(native.verifyKey, o.ws ?? WS, verifyBody(key, o), o.now ?? T0, { scope: o.apis ?? '*' }) === undefined;
}

function code(key: string, o: VerifyOpts = {}): string {
  return verify(key, o).code as string;
}

function balance(keyId: string, now = T0): number | undefined {
  return native.creditsGet(keyId, now)?.[0];
}

function thrownCode(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return (err as { code?: unknown }).code;
  }
  throw new Error('expected a throw');
}

const limit = (name: string, lim: number, duration: number, autoApply: boolean) => ({ name, limit: lim, duration, autoApply });
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const rl = (data: Data, name: string): any => (data.ratelimits as { name: string }[] | undefined)?.find((r) => r.name === name);

describe('every code', () => {
  it('VALID for an enabled key', async () => {
    const { key, keyId } = await newKey();
    const r = verifyRaw(key);
    expect(r.data).toEqual({ valid: true, code: 'VALID', keyId, enabled: true });
    expect(r.wrote).toBe(false);
  });

  it('NOT_FOUND for an unknown key, with only valid and code', () => {
    expect(verify('nope_abcdefghijklmnopqrstu')).toEqual({ valid: false, code: 'NOT_FOUND' });
    expect(verify('x')).toEqual({ valid: false, code: 'NOT_FOUND' });
  });

  it('NOT_FOUND for a deleted key, at once', async () => {
    const { key, keyId } = await newKey();
    expect(code(key)).toBe('VALID');
    await deleteKey({ keyId, permanent: false }, ctx());
    expect(verify(key)).toEqual({ valid: false, code: 'NOT_FOUND' });
  });

  it('NOT_FOUND for a key of a deleted API, at once (before its keys are purged)', async () => {
    const { key, apiId } = await newKey();
    expect(code(key)).toBe('VALID');
    // What apis.deleteApi commits synchronously; the key records stay until the background purge.
    expect(direct.transact(() => markApiDeleted(WS, apiId, T0))).toBe(true);
    expect(verify(key)).toEqual({ valid: false, code: 'NOT_FOUND' });
  });

  it('NOT_FOUND for a key of another workspace (both directions)', async () => {
    const mine = await newKey();
    const theirs = await newKey({ ws: OTHER_WS });
    expect(verify(mine.key, { ws: OTHER_WS })).toEqual({ valid: false, code: 'NOT_FOUND' });
    expect(verify(theirs.key, { ws: WS })).toEqual({ valid: false, code: 'NOT_FOUND' });
    expect(code(theirs.key, { ws: OTHER_WS })).toBe('VALID');
  });

  it('NOT_FOUND for a key of an API outside allowedApis', async () => {
    const { key, apiId } = await newKey({ credits: { remaining: 5 } });
    const other = await newApi();
    expect(verify(key, { apis: other })).toEqual({ valid: false, code: 'NOT_FOUND' });
    expect(verify(key, { apis: `${other}x\n${apiId}x` })).toEqual({ valid: false, code: 'NOT_FOUND' });
    expect(verify(key, { apis: `${other}\n${apiId}` })).toMatchObject({ valid: true, code: 'VALID', credits: 4 });
    expect(verify(key, { apis: apiId })).toMatchObject({ code: 'VALID', credits: 3 });
  });

  it('DISABLED for a key created with enabled=false', async () => {
    const { key, keyId } = await newKey({ enabled: false });
    expect(verify(key)).toEqual({ valid: false, code: 'DISABLED', keyId, enabled: false });
  });

  it('EXPIRED strictly after expires: at expires VALID, at expires+1 EXPIRED', async () => {
    const expires = T0 + 10_000;
    const { key } = await newKey({ expires });
    expect(verify(key, { now: expires - 1 })).toMatchObject({ valid: true, code: 'VALID', expires });
    expect(verify(key, { now: expires })).toMatchObject({ valid: true, code: 'VALID', expires });
    expect(verify(key, { now: expires + 1 })).toMatchObject({ valid: false, code: 'EXPIRED', expires });
    expect(verify(key, { now: expires + 86_400_000 })).toMatchObject({ code: 'EXPIRED' });
  });

  it('INSUFFICIENT_PERMISSIONS when the query is not satisfied', async () => {
    const { key } = await newKey({ permissions: ['a.read'] });
    expect(verify(key, { query: 'a.write' })).toMatchObject({ valid: false, code: 'INSUFFICIENT_PERMISSIONS', permissions: ['a.read'] });
    expect(code(key, { query: 'a.read' })).toBe('VALID');
  });

  it('RATE_LIMITED once an auto-applied limit is used up', async () => {
    const { key } = await newKey({ ratelimits: [limit('base', 2, MIN, true)] });
    expect(code(key)).toBe('VALID');
    expect(code(key)).toBe('VALID');
    expect(verify(key)).toMatchObject({ valid: false, code: 'RATE_LIMITED' });
  });

  it('USAGE_EXCEEDED once the credits are spent', async () => {
    const { key } = await newKey({ credits: { remaining: 1 } });
    expect(verify(key)).toMatchObject({ valid: true, code: 'VALID', credits: 0 });
    expect(verify(key)).toMatchObject({ valid: false, code: 'USAGE_EXCEEDED', credits: 0 });
  });
});

describe('precedence: the first failing check wins', () => {
  it('disabled AND expired AND out of credits → DISABLED', async () => {
    const { key } = await newKey({ enabled: false, expires: T0 - 1, credits: { remaining: 0 }, permissions: ['p'] });
    expect(code(key, { query: 'missing' })).toBe('DISABLED');
  });

  it('expired + no credits (+ missing permission) → EXPIRED', async () => {
    const { key } = await newKey({ expires: T0 - 1, credits: { remaining: 0 } });
    expect(code(key)).toBe('EXPIRED');
    expect(code(key, { query: 'missing' })).toBe('EXPIRED');
  });

  it('missing permission + rate-limited + no credits → INSUFFICIENT_PERMISSIONS', async () => {
    const { key } = await newKey({ credits: { remaining: 1 }, ratelimits: [limit('one', 1, MIN, true)] });
    expect(code(key)).toBe('VALID');
    expect(code(key, { query: 'missing' })).toBe('INSUFFICIENT_PERMISSIONS');
  });

  it('rate-limited + no credits → RATE_LIMITED', async () => {
    const { key } = await newKey({ credits: { remaining: 1 }, ratelimits: [limit('one', 1, MIN, true)] });
    expect(verify(key)).toMatchObject({ code: 'VALID', credits: 0 });
    expect(code(key)).toBe('RATE_LIMITED');
  });

  it('a bad query on a disabled or expired key is never parsed (the earlier code wins)', async () => {
    expect(code((await newKey({ enabled: false })).key, { query: 'a AND' })).toBe('DISABLED');
    expect(code((await newKey({ expires: T0 - 1 })).key, { query: '((' })).toBe('EXPIRED');
  });
});

describe('a refused verification consumes nothing', () => {
  it('RATE_LIMITED spends no credits and no capacity of the other limits', async () => {
    const { key, keyId } = await newKey({ credits: { remaining: 10 }, ratelimits: [limit('tight', 1, 1_000, true), limit('wide', 10, MIN, true)] });
    const first = verify(key);
    expect(first).toMatchObject({ code: 'VALID', credits: 9 });
    expect(rl(first, 'wide').remaining).toBe(9);
    const refused = verifyRaw(key, { now: T0 + 500 });
    expect(refused.data.code).toBe('RATE_LIMITED');
    expect(refused.wrote).toBe(false);
    expect(refused.data.credits).toBe(9);
    expect(rl(refused.data, 'tight').exceeded).toBe(true);
    expect(rl(refused.data, 'wide')).toMatchObject({ exceeded: false, remaining: 9 });
    expect(balance(keyId, T0 + 500)).toBe(9);
    // Two buckets later `tight` is free again; `wide` has lost only the one admitted call.
    const later = verify(key, { now: T0 + 2_000 });
    expect(later).toMatchObject({ code: 'VALID', credits: 8 });
    expect(rl(later, 'wide').remaining).toBe(8);
  });

  it('USAGE_EXCEEDED spends no rate-limit capacity', async () => {
    const { key, keyId } = await newKey({ credits: { remaining: 1 }, ratelimits: [limit('base', 3, MIN, true)] });
    expect(rl(verify(key), 'base').remaining).toBe(2);
    const refused = verifyRaw(key);
    expect(refused.data).toMatchObject({ code: 'USAGE_EXCEEDED', credits: 0 });
    expect(refused.wrote).toBe(false);
    expect(rl(refused.data, 'base')).toMatchObject({ exceeded: false, remaining: 2 });
    await updateCredits({ keyId, operation: 'set', value: 5 }, ctx());
    expect(rl(verify(key), 'base').remaining).toBe(1);
    expect(rl(verify(key), 'base').remaining).toBe(0);
    expect(code(key)).toBe('RATE_LIMITED');
    expect(balance(keyId)).toBe(3);
  });

  it('DISABLED, EXPIRED and INSUFFICIENT_PERMISSIONS spend neither', async () => {
    const lim = [limit('base', 1, MIN, true)];
    for (const [opts, query] of [[{ enabled: false }, undefined], [{ expires: T0 - 1 }, undefined], [{}, 'missing']] as const) {
      const { key, keyId } = await newKey({ ...opts, credits: { remaining: 3 }, ratelimits: lim });
      const refused = verifyRaw(key, query === undefined ? {} : { query });
      expect(refused.wrote).toBe(false);
      expect(refused.data.credits).toBe(3);
      expect(balance(keyId)).toBe(3);
      if ('enabled' in opts) await updateKey({ keyId, enabled: true }, ctx());
      if ('expires' in opts) await updateKey({ keyId, expires: null }, ctx());
      // The limit of 1 still has its one call.
      expect(verify(key)).toMatchObject({ code: 'VALID', credits: 2 });
    }
  });
});

describe('credits', () => {
  it('default cost 1; `credits` is the balance after', async () => {
    const { key, keyId } = await newKey({ credits: { remaining: 5 } });
    const r = verifyRaw(key);
    expect(r.data).toMatchObject({ valid: true, code: 'VALID', credits: 4 });
    expect(r.wrote).toBe(true);
    expect(verify(key, { cost: 3 }).credits).toBe(1);
    expect(balance(keyId)).toBe(1);
  });

  it('cost 0 consumes nothing', async () => {
    const { key, keyId } = await newKey({ credits: { remaining: 5 } });
    const r = verifyRaw(key, { cost: 0 });
    expect(r.data).toMatchObject({ code: 'VALID', credits: 5 });
    expect(r.wrote).toBe(false);
    expect(balance(keyId)).toBe(5);
  });

  it('cost > remaining → USAGE_EXCEEDED with the balance unchanged; cost = remaining → VALID 0', async () => {
    const { key, keyId } = await newKey({ credits: { remaining: 3 } });
    expect(verify(key, { cost: 4 })).toMatchObject({ valid: false, code: 'USAGE_EXCEEDED', credits: 3 });
    expect(balance(keyId)).toBe(3);
    expect(verify(key, { cost: 3 })).toMatchObject({ valid: true, code: 'VALID', credits: 0 });
    expect(balance(keyId)).toBe(0);
  });

  it('remaining 0 → USAGE_EXCEEDED even with cost 0', async () => {
    const { key } = await newKey({ credits: { remaining: 0 } });
    expect(verify(key, { cost: 0 })).toMatchObject({ valid: false, code: 'USAGE_EXCEEDED', credits: 0 });
    expect(verify(key)).toMatchObject({ code: 'USAGE_EXCEEDED', credits: 0 });
  });

  it('a key without credits is unlimited and reports no `credits`', async () => {
    const { key } = await newKey();
    for (let i = 0; i < 5; i++) expect(verify(key, { cost: 1_000_000 })).not.toHaveProperty('credits');
  });
});

describe('refill (lazy, UTC boundaries, sets the balance)', () => {
  it('daily at 00:00 UTC, set to the amount (not added), once per day', async () => {
    const { key, keyId } = await newKey({ credits: { remaining: 10, refill: { interval: 'daily', amount: 10 } } });
    for (let i = 0; i < 3; i++) verify(key);
    const lastMs = Date.UTC(2026, 0, 15, 23, 59, 59, 999);
    const midnight = Date.UTC(2026, 0, 16);
    expect(verify(key, { cost: 0, now: lastMs }).credits).toBe(7);
    expect(verify(key, { cost: 0, now: midnight }).credits).toBe(10);
    expect(getKey({ keyId, decrypt: false }, ctx(midnight)).credits?.remaining).toBe(10);
    expect(verify(key, { now: midnight + 3_600_000 }).credits).toBe(9);
    // Later the same day: no second refill.
    expect(verify(key, { cost: 0, now: midnight + 5 * 3_600_000 }).credits).toBe(9);
    // The next day: set to 10 again.
    expect(verify(key, { now: Date.UTC(2026, 0, 17, 8) }).credits).toBe(9);
  });

  it('a spent key becomes VALID again after the boundary', async () => {
    const { key } = await newKey({ credits: { remaining: 1, refill: { interval: 'daily', amount: 2 } } });
    expect(verify(key).credits).toBe(0);
    expect(code(key, { now: Date.UTC(2026, 0, 15, 23, 59, 59, 999) })).toBe('USAGE_EXCEEDED');
    expect(verify(key, { now: Date.UTC(2026, 0, 16) })).toMatchObject({ code: 'VALID', credits: 1 });
  });

  it('applies lazily: before any read the stored balance is the old one, the first read after the boundary refills', async () => {
    const { key, keyId } = await newKey({ credits: { remaining: 4, refill: { interval: 'daily', amount: 6 } } });
    verify(key);
    const next = Date.UTC(2026, 0, 16, 6);
    expect(balance(keyId, T0)).toBe(3);
    expect(balance(keyId, next)).toBe(6);
    expect(verify(key, { now: next }).credits).toBe(5);
  });

  it('updateCredits after a boundary works on the refilled balance, and a `set` is not overwritten by that refill', async () => {
    const refill = { interval: 'daily' as const, amount: 10 };
    const day2 = Date.UTC(2026, 0, 16, 9);
    const inc = await newKey({ credits: { remaining: 3, refill } });
    expect(await updateCredits({ keyId: inc.keyId, operation: 'increment', value: 5 }, ctx(day2))).toMatchObject({ remaining: 15 });
    expect(verify(inc.key, { now: day2 + 1 }).credits).toBe(14);
    const set = await newKey({ credits: { remaining: 3, refill } });
    expect(await updateCredits({ keyId: set.keyId, operation: 'set', value: 2 }, ctx(day2))).toMatchObject({ remaining: 2 });
    expect(verify(set.key, { now: day2 + 1 }).credits).toBe(1);
    expect(code(set.key, { now: day2 + 2 })).toBe('VALID');
    expect(code(set.key, { now: day2 + 3 })).toBe('USAGE_EXCEEDED');
    // …until the next boundary.
    expect(verify(set.key, { now: Date.UTC(2026, 0, 17) }).credits).toBe(9);
  });

  it('a refill added by updateKey first applies at the first boundary after it was added', async () => {
    const { key, keyId } = await newKey({ credits: { remaining: 0 } });
    const nextDay = Date.UTC(2026, 0, 16, 0, 0, 10);
    const added = await updateKey({ keyId, credits: { refill: { interval: 'daily', amount: 4 } } }, ctx(nextDay));
    expect(added.credits).toEqual({ remaining: 0, refill: { interval: 'daily', amount: 4 } });
    expect(code(key, { now: nextDay + 1 })).toBe('USAGE_EXCEEDED');
    expect(verify(key, { now: Date.UTC(2026, 0, 17) }).credits).toBe(3);
    // Monthly: added on the 20th with refillDay 5 → the 5th of the next month.
    const monthly = await newKey({ credits: { remaining: 1 } });
    await updateKey({ keyId: monthly.keyId, credits: { refill: { interval: 'monthly', amount: 100, refillDay: 5 } } }, ctx(Date.UTC(2026, 0, 20)));
    expect(verify(monthly.key, { now: Date.UTC(2026, 0, 21) }).credits).toBe(0);
    expect(verify(monthly.key, { now: Date.UTC(2026, 1, 5) }).credits).toBe(99);
  });

  it('updateKey credits {} changes nothing, on a limited key and on an unlimited one', async () => {
    const limited = await newKey({ credits: { remaining: 3, refill: { interval: 'daily', amount: 3 } } });
    expect((await updateKey({ keyId: limited.keyId, credits: {} }, ctx())).credits).toEqual({ remaining: 3, refill: { interval: 'daily', amount: 3 } });
    const unlimited = await newKey();
    expect((await updateKey({ keyId: unlimited.keyId, credits: {} }, ctx())).credits).toBeUndefined();
  });

  it('monthly on refillDay', async () => {
    const { key } = await newKey({ credits: { remaining: 5, refill: { interval: 'monthly', amount: 100, refillDay: 15 } } });
    expect(verify(key).credits).toBe(4);
    expect(verify(key, { cost: 0, now: Date.UTC(2026, 0, 31) }).credits).toBe(4);
    expect(verify(key, { cost: 0, now: Date.UTC(2026, 1, 14, 23, 59, 59, 999) }).credits).toBe(4);
    expect(verify(key, { now: Date.UTC(2026, 1, 15) }).credits).toBe(99);
    expect(verify(key, { now: Date.UTC(2026, 1, 28) }).credits).toBe(98);
    expect(verify(key, { now: Date.UTC(2026, 2, 15, 0, 0, 0, 1) }).credits).toBe(99);
  });

  it('refillDay 31: Jan 31 → Feb 28 → Mar 31', async () => {
    const created = Date.UTC(2026, 0, 31, 12);
    const { key } = await newKey({ now: created, credits: { remaining: 1, refill: { interval: 'monthly', amount: 50, refillDay: 31 } } });
    expect(verify(key, { now: created }).credits).toBe(0);
    expect(code(key, { now: Date.UTC(2026, 1, 27, 23, 59, 59, 999) })).toBe('USAGE_EXCEEDED');
    expect(verify(key, { now: Date.UTC(2026, 1, 28) })).toMatchObject({ code: 'VALID', credits: 49 });
    expect(verify(key, { cost: 49, now: Date.UTC(2026, 2, 1) }).credits).toBe(0);
    expect(code(key, { now: Date.UTC(2026, 2, 30, 23, 59, 59, 999) })).toBe('USAGE_EXCEEDED');
    expect(verify(key, { now: Date.UTC(2026, 2, 31) })).toMatchObject({ code: 'VALID', credits: 49 });
  });

  it('refillDay 31 in a leap year: Feb 29 2028, not Feb 28', async () => {
    const created = Date.UTC(2028, 0, 31, 12);
    const { key } = await newKey({ now: created, credits: { remaining: 1, refill: { interval: 'monthly', amount: 50, refillDay: 31 } } });
    expect(verify(key, { now: created }).credits).toBe(0);
    expect(code(key, { now: Date.UTC(2028, 1, 28, 23, 59, 59, 999) })).toBe('USAGE_EXCEEDED');
    expect(verify(key, { now: Date.UTC(2028, 1, 29) })).toMatchObject({ code: 'VALID', credits: 49 });
  });
});

describe('key rate limits', () => {
  it('autoApply limits run with cost 1 and report limit, duration, remaining, reset', async () => {
    const { key } = await newKey({ ratelimits: [limit('base', 3, MIN, true)] });
    const seen = [verify(key), verify(key), verify(key)].map((d) => rl(d, 'base').remaining);
    expect(seen).toEqual([2, 1, 0]);
    const refused = verify(key, { now: T0 + 30_000 });
    expect(refused.code).toBe('RATE_LIMITED');
    expect(refused.ratelimits).toHaveLength(1);
    expect(rl(refused, 'base')).toMatchObject({ name: 'base', limit: 3, duration: MIN, remaining: 0, reset: T0 + MIN, exceeded: true, autoApply: true });
    expect(typeof rl(refused, 'base').id).toBe('string');
  });

  it('a named limit runs with the given cost, replacing the automatic cost', async () => {
    const { key } = await newKey({ ratelimits: [limit('base', 10, MIN, true)] });
    const d = verify(key, { named: [['base', 4]] });
    expect(d.ratelimits).toHaveLength(1);
    expect(rl(d, 'base').remaining).toBe(6);
    expect(rl(verify(key), 'base').remaining).toBe(5);
    expect(rl(verify(key, { named: [['base', 5]] }), 'base').remaining).toBe(0);
    // Full: cost 0 still fits (effective = limit), cost 1 does not.
    expect(verify(key, { named: [['base', 0]] }).code).toBe('VALID');
    expect(code(key)).toBe('RATE_LIMITED');
    expect(code(key, { named: [['base', 1]] })).toBe('RATE_LIMITED');
  });

  it('an ad-hoc limit (limit + duration in the request) needs no stored limit and counts in the key window of its name', async () => {
    const { key, keyId } = await newKey();
    const first = verify(key, { named: [['burst', 1, 2, MIN]] });
    expect(first.code).toBe('VALID');
    expect(first.ratelimits).toEqual([{ id: '', name: 'burst', limit: 2, duration: MIN, remaining: 1, reset: T0 + MIN, exceeded: false, autoApply: false }]);
    expect(rl(verify(key, { named: [['burst', 1, 2, MIN]] }), 'burst').remaining).toBe(0);
    const refused = verify(key, { named: [['burst', 1, 2, MIN]] });
    expect(refused).toMatchObject({ valid: false, code: 'RATE_LIMITED', keyId });
    expect(rl(refused, 'burst')).toMatchObject({ exceeded: true, remaining: 0 });
    // Without the ad-hoc entry the name is unknown to the key: 412 as ever.
    expect(thrownCode(() => verify(key, { named: [['burst', 1]] }))).toBe('VERIFY_UNKNOWN_LIMIT');
    // A larger ad-hoc limit on the same window admits again; limit 0 refuses every call (as an
    // override with limit 0 does), even at cost 0.
    expect(rl(verify(key, { named: [['burst', 1, 5, MIN]] }), 'burst').remaining).toBe(2);
    expect(code(key, { named: [['other', 1, 0, MIN]] })).toBe('RATE_LIMITED');
    expect(code(key, { named: [['other', 0, 0, MIN]] })).toBe('RATE_LIMITED');
  });

  it('an ad-hoc limit takes the place of a stored key or identity limit of that name, for this call only', async () => {
    const { key } = await newKey({ ratelimits: [limit('base', 1, MIN, true)] });
    expect(code(key)).toBe('VALID');
    expect(code(key)).toBe('RATE_LIMITED');
    const adHoc = verify(key, { named: [['base', 1, 3, MIN]] });
    expect(adHoc.ratelimits).toEqual([expect.objectContaining({ id: '', name: 'base', limit: 3, remaining: 1, autoApply: false })]);
    expect(code(key)).toBe('RATE_LIMITED');
    // The last ad-hoc entry of a name wins, with the last cost named for it.
    const twice = verify(key, { named: [['base', 1, 2, MIN], ['base', 0, 10, MIN]] });
    expect(twice.ratelimits).toEqual([expect.objectContaining({ limit: 10, remaining: 8 })]);
  });

  it('a named cost above the limit is refused; cost 0 on a non-full window peeks', async () => {
    const { key } = await newKey({ ratelimits: [limit('base', 5, MIN, true)] });
    expect(code(key, { named: [['base', 6]] })).toBe('RATE_LIMITED');
    const peek = verifyRaw(key, { named: [['base', 0]] });
    expect(peek.data.code).toBe('VALID');
    expect(rl(peek.data, 'base').remaining).toBe(5);
    expect(rl(verify(key), 'base').remaining).toBe(4);
  });

  it('non-autoApply limits apply only when named', async () => {
    const { key } = await newKey({ ratelimits: [limit('manual', 2, MIN, false)] });
    for (let i = 0; i < 5; i++) {
      const d = verify(key);
      expect(d.code).toBe('VALID');
      expect(d.ratelimits).toBeUndefined();
    }
    expect(rl(verify(key, { named: [['manual', 1]] }), 'manual')).toMatchObject({ remaining: 1, autoApply: false });
    expect(code(key, { named: [['manual', 1]] })).toBe('VALID');
    expect(code(key, { named: [['manual', 1]] })).toBe('RATE_LIMITED');
    expect(code(key)).toBe('VALID');
  });

  it('identity limits are shared by the keys of one identity', async () => {
    const apiId = await newApi();
    const a = await newKey({ apiId, externalId: 'shared_user' });
    const b = await newKey({ apiId, externalId: 'shared_user' });
    await updateIdentity({ identity: 'shared_user', ratelimits: [limit('per_user', 3, MIN, true)] }, ctx());
    expect(code(a.key)).toBe('VALID');
    expect(code(a.key)).toBe('VALID');
    const third = verify(b.key);
    expect(third.code).toBe('VALID');
    expect(rl(third, 'per_user').remaining).toBe(0);
    expect(third.identity).toMatchObject({ externalId: 'shared_user' });
    expect(third.identity.ratelimits).toEqual([expect.objectContaining({ name: 'per_user', limit: 3, duration: MIN, autoApply: true })]);
    expect(code(b.key)).toBe('RATE_LIMITED');
    expect(code(a.key)).toBe('RATE_LIMITED');
    // Named on a key that has no such limit itself: the identity's counts (no 412).
    expect(code(a.key, { named: [['per_user', 1]] })).toBe('RATE_LIMITED');
  });

  it("a key limit shadows the identity's limit of the same name", async () => {
    const apiId = await newApi();
    const plain = await newKey({ apiId, externalId: 'shadow_user' });
    const own = await newKey({ apiId, externalId: 'shadow_user', ratelimits: [limit('calls', 5, MIN, true)] });
    await updateIdentity({ identity: 'shadow_user', ratelimits: [limit('calls', 1, MIN, true)] }, ctx());
    expect(code(plain.key)).toBe('VALID');
    expect(code(plain.key)).toBe('RATE_LIMITED');
    for (let i = 0; i < 5; i++) {
      const d = verify(own.key);
      expect(d.code, `call ${i}`).toBe('VALID');
      expect(d.ratelimits).toHaveLength(1);
      expect(rl(d, 'calls')).toMatchObject({ limit: 5, remaining: 4 - i });
    }
    expect(code(own.key)).toBe('RATE_LIMITED');
  });

  it('the window resets after the duration (the previous bucket still weighs at its start)', async () => {
    const { key } = await newKey({ ratelimits: [limit('sec', 2, 1_000, true)] });
    expect(rl(verify(key), 'sec').reset).toBe(T0 + 1_000);
    verify(key, { now: T0 + 10 });
    expect(code(key, { now: T0 + 999 })).toBe('RATE_LIMITED');
    expect(code(key, { now: T0 + 1_000 })).toBe('RATE_LIMITED');
    const fresh = verify(key, { now: T0 + 2_000 });
    expect(fresh.code).toBe('VALID');
    expect(rl(fresh, 'sec')).toMatchObject({ remaining: 1, reset: T0 + 3_000 });
  });

  it('previous-bucket weighting: floor(previous · (1 − elapsed/duration))', async () => {
    // A name of at least 3 characters: verifyKey's schema refuses shorter ones.
    const { key } = await newKey({ ratelimits: [limit('win', 10, 1_000, false)] });
    expect(code(key, { named: [['win', 10]] })).toBe('VALID');
    // A quarter into the next bucket 7 of the 10 still count: 3 fit, 4 do not.
    expect(code(key, { named: [['win', 4]], now: T0 + 1_250 })).toBe('RATE_LIMITED');
    const d = verify(key, { named: [['win', 3]], now: T0 + 1_250 });
    expect(d.code).toBe('VALID');
    expect(rl(d, 'win').remaining).toBe(0);
    expect(code(key, { named: [['win', 1]], now: T0 + 1_250 })).toBe('RATE_LIMITED');
    // Later in the same bucket: current 3 + floor(10 · 0.1) = 4 → 6 fit.
    expect(rl(verify(key, { named: [['win', 6]], now: T0 + 1_900 }), 'win').remaining).toBe(0);
  });

  it('an unknown named limit throws VERIFY_UNKNOWN_LIMIT (and consumes nothing)', async () => {
    const { key, keyId } = await newKey({ credits: { remaining: 2 }, ratelimits: [limit('base', 1, MIN, true)] });
    expect(thrownCode(() => verify(key, { named: [['nope', 1]] }))).toBe('VERIFY_UNKNOWN_LIMIT');
    expect(thrownCode(() => verify(key, { named: [['base', 1], ['nope', 1]] }))).toBe('VERIFY_UNKNOWN_LIMIT');
    expect(balance(keyId)).toBe(2);
    expect(verify(key)).toMatchObject({ code: 'VALID', credits: 1 });
  });
});

describe('permission queries', () => {
  const held = ['documents.read', 'billing.view'];

  it.each([
    ['documents.read', 'VALID'],
    ['documents.read AND billing.view', 'VALID'],
    ['documents.read AND documents.write', 'INSUFFICIENT_PERMISSIONS'],
    ['documents.write OR billing.view', 'VALID'],
    ['documents.write OR admin', 'INSUFFICIENT_PERMISSIONS'],
    // AND binds tighter than OR.
    ['documents.read OR documents.write AND admin', 'VALID'],
    ['(documents.read OR documents.write) AND admin', 'INSUFFICIENT_PERMISSIONS'],
    ['documents.write AND billing.view OR documents.read', 'VALID'],
    ['documents.write AND (billing.view OR documents.read)', 'INSUFFICIENT_PERMISSIONS'],
    ['((documents.read)) AND (billing.view OR (x AND y))', 'VALID'],
    // Operators are case-insensitive.
    ['documents.read aNd billing.view', 'VALID'],
    ['admin or billing.view', 'VALID'],
    ['documents.read and admin', 'INSUFFICIENT_PERMISSIONS'],
  ])('%s → %s', async (query, expected) => {
    const { key } = await newKey({ permissions: held });
    expect(code(key, { query })).toBe(expected);
  });

  it('a held `documents.*` covers `documents.read`, not other prefixes', async () => {
    const { key } = await newKey({ permissions: ['documents.*'] });
    expect(code(key, { query: 'documents.read' })).toBe('VALID');
    expect(code(key, { query: 'documents.read AND documents.write' })).toBe('VALID');
    expect(code(key, { query: 'documents.*' })).toBe('VALID');
    expect(code(key, { query: 'billing.read' })).toBe('INSUFFICIENT_PERMISSIONS');
    expect(code(key, { query: 'documentsX.read' })).toBe('INSUFFICIENT_PERMISSIONS');
  });

  it('a queried wildcard is matched literally, not as a pattern over held permissions', async () => {
    const { key } = await newKey({ permissions: ['documents.read'] });
    expect(code(key, { query: 'documents.*' })).toBe('INSUFFICIENT_PERMISSIONS');
  });

  it("a role's permissions count; deleting the role takes effect at once", async () => {
    await createRole({ name: 'verify_editor', permissions: ['posts.write', 'posts.read'] }, ctx());
    const { key } = await newKey({ roles: ['verify_editor'], permissions: ['profile.read'] });
    const d = verify(key, { query: 'posts.write AND profile.read' });
    expect(d.code).toBe('VALID');
    expect(d.roles).toEqual(['verify_editor']);
    expect([...(d.permissions as string[])].sort()).toEqual(['posts.read', 'posts.write', 'profile.read']);
    await deleteRole({ role: 'verify_editor' }, ctx());
    const after = verify(key, { query: 'posts.write' });
    expect(after.code).toBe('INSUFFICIENT_PERMISSIONS');
    expect(after.roles).toBeUndefined();
    expect(after.permissions).toEqual(['profile.read']);
  });

  it('the permissions listed are each held one once, in the order first held, also when there are many (direct, then by role)', async () => {
    const shared = Array.from({ length: 40 }, (_, i) => `many.shared${i}`);
    await createRole({ name: 'verify_many_a', permissions: [...shared, 'many.a'] }, ctx());
    await createRole({ name: 'verify_many_b', permissions: ['many.b', ...shared.slice(0, 20)] }, ctx());
    const direct = ['many.direct', ...shared.slice(10, 30)];
    const { key } = await newKey({ roles: ['verify_many_a', 'verify_many_b'], permissions: direct });
    const listed = verify(key).permissions as string[];
    const expected = [...new Set([...direct, ...shared, 'many.a', 'many.b'])];
    expect(new Set(listed)).toEqual(new Set(expected));
    expect(listed).toHaveLength(expected.length);
    // Direct ones first, as stored, then each role's new ones in role order.
    expect(listed.slice(0, direct.length)).toEqual(direct);
    expect(listed.slice(-2)).toEqual(['many.a', 'many.b']);
  });

  it('deleting a permission takes effect at once, held directly or through a role', async () => {
    await createRole({ name: 'verify_viewer', permissions: ['reports.view'] }, ctx());
    const { key } = await newKey({ roles: ['verify_viewer'], permissions: ['temp.perm'] });
    expect(code(key, { query: 'temp.perm AND reports.view' })).toBe('VALID');
    await deletePermission({ permission: 'temp.perm' }, ctx());
    expect(code(key, { query: 'temp.perm' })).toBe('INSUFFICIENT_PERMISSIONS');
    expect(code(key, { query: 'reports.view' })).toBe('VALID');
    await deletePermission({ permission: 'reports.view' }, ctx());
    expect(code(key, { query: 'reports.view' })).toBe('INSUFFICIENT_PERMISSIONS');
  });

  it.each(['a AND', '(a OR b', 'a b', 'a AND ()', 'a $ b', ')', 'OR a', 'a OR OR b'])('syntax error %j → VERIFY_QUERY_SYNTAX', async (query) => {
    const { key } = await newKey({ permissions: ['a'] });
    expect(thrownCode(() => verify(key, { query }))).toBe('VERIFY_QUERY_SYNTAX');
  });

  it('an empty query is not one the schema accepts: declined (the full way answers 400), nothing spent', async () => {
    const { key, keyId } = await newKey({ permissions: ['a'], credits: { remaining: 2 } });
    expect(declined(key, { query: '' })).toBe(true);
    expect(balance(keyId)).toBe(2);
  });

  it('an unknown key is NOT_FOUND even with a bad query', () => {
    expect(verify('unknown_key_123456', { query: 'a AND (' })).toEqual({ valid: false, code: 'NOT_FOUND' });
  });
});

describe('argument sizes around the native stack buffers', () => {
  it('permission queries of every length around 256 bytes and up to 1000 are read whole', async () => {
    const { key } = await newKey({ permissions: ['zz.last'] });
    for (let len = 240; len <= 270; len++) {
      // n filler words joined by " OR ", the first padded, then the held permission: exactly len bytes.
      const n = Math.floor((len - 7) / 5);
      const query = [`b${'x'.repeat(len - 7 - 5 * n)}`, ...Array<string>(n - 1).fill('b'), 'zz.last'].join(' OR ');
      expect(query.length).toBe(len);
      expect(code(key, { query }), `length ${len}`).toBe('VALID');
      expect(code(key, { query: query.replace(/zz\.last$/, 'zz.lasx') }), `length ${len}`).toBe('INSUFFICIENT_PERMISSIONS');
    }
    const long = `${'p.x OR '.repeat(140)}zz.last`;
    expect(long.length).toBeGreaterThan(980);
    expect(code(key, { query: long })).toBe('VALID');
  });

  it('named limits whose multi-byte names straddle 256 bytes are read whole', async () => {
    for (let pad = 118; pad <= 130; pad++) {
      const name = `${'é'.repeat(pad)}x`;
      const { key } = await newKey({ ratelimits: [limit(name, 5, MIN, false)] });
      const d = verify(key, { named: [[name, 2]] });
      expect(d.code, `name of ${Buffer.byteLength(name)} bytes`).toBe('VALID');
      expect(rl(d, name).remaining).toBe(3);
    }
  });

  it('several named limits together longer than 256 bytes', async () => {
    const names = Array.from({ length: 12 }, (_, i) => `limit_number_${i}_${'n'.repeat(20)}`);
    const { key } = await newKey({ ratelimits: names.map((n) => limit(n, 10, MIN, false)) });
    const d = verify(key, { named: names.map((n, i) => [n, i % 3] as [string, number]) });
    expect(d.code).toBe('VALID');
    expect(d.ratelimits).toHaveLength(12);
    names.forEach((n, i) => expect(rl(d, n).remaining).toBe(10 - (i % 3)));
  });

  it('a very long unknown key is NOT_FOUND, up to the schema\'s 512 characters (1,024 to 2,048 bytes of UTF-8 included); a longer one is declined', () => {
    expect(verify('k'.repeat(512))).toEqual({ valid: false, code: 'NOT_FOUND' });
    expect(verify('ключ'.repeat(128))).toEqual({ valid: false, code: 'NOT_FOUND' });
    expect(verify('😀'.repeat(512))).toEqual({ valid: false, code: 'NOT_FOUND' });
    // Longer is not a body the schema accepts: the full way answers its 400.
    expect(declined('k'.repeat(513))).toBe(true);
    expect(declined('k'.repeat(5_000))).toBe(true);
    expect(declined('ключ'.repeat(200))).toBe(true);
  });
});

describe('result fields per outcome (unkey-v2.md §3.2)', () => {
  async function richKey(extra: KeyOpts = {}): Promise<{ key: string; keyId: string }> {
    const apiId = await newApi();
    const externalId = `rich_${Math.random().toString(36).slice(2, 10)}`;
    const roleName = `rich_role_${Math.random().toString(36).slice(2, 10)}`;
    await createRole({ name: roleName, permissions: ['r.perm'] }, ctx());
    const k = await newKey({
      apiId,
      name: 'rich key',
      meta: { plan: 'pro', nested: { n: 1, list: [1, 'two'] } },
      expires: T0 + 3_600_000,
      credits: { remaining: 10 },
      permissions: ['d.perm'],
      roles: [roleName],
      externalId,
      ratelimits: [limit('auto', 1, MIN, true), limit('other', 100, MIN, true)],
      ...extra,
    });
    await updateIdentity({ identity: externalId, meta: { tier: 'gold' } }, ctx());
    return k;
  }

  const COMMON = ['valid', 'code', 'keyId', 'name', 'meta', 'expires', 'credits', 'enabled', 'permissions', 'roles', 'identity'];

  function expectCommon(d: Data, keyId: string, credits: number): void {
    expect(d.keyId).toBe(keyId);
    expect(d.name).toBe('rich key');
    expect(d.meta).toEqual({ plan: 'pro', nested: { n: 1, list: [1, 'two'] } });
    expect(d.expires).toBe(T0 + 3_600_000);
    expect(d.credits).toBe(credits);
    expect([...(d.permissions as string[])].sort()).toEqual(['d.perm', 'r.perm']);
    expect(d.roles).toHaveLength(1);
    expect(d.identity).toMatchObject({ externalId: expect.stringMatching(/^rich_/), meta: { tier: 'gold' } });
    expect(typeof d.identity.id).toBe('string');
  }

  it('VALID: everything applicable, credits after the decrement, the checked limits', async () => {
    const { key, keyId } = await richKey();
    const d = verify(key);
    expect(Object.keys(d).sort()).toEqual([...COMMON, 'ratelimits'].sort());
    expect(d).toMatchObject({ valid: true, code: 'VALID', enabled: true });
    expectCommon(d, keyId, 9);
    expect(d.ratelimits).toHaveLength(2);
    for (const r of d.ratelimits as Data[]) {
      expect(Object.keys(r).sort()).toEqual(['autoApply', 'duration', 'exceeded', 'id', 'limit', 'name', 'remaining', 'reset']);
      expect(r.exceeded).toBe(false);
    }
  });

  it('RATE_LIMITED: ratelimits with exceeded:true on the failing one, credits unchanged', async () => {
    const { key, keyId } = await richKey();
    verify(key);
    const d = verify(key);
    expect(d).toMatchObject({ valid: false, code: 'RATE_LIMITED', enabled: true });
    expect(Object.keys(d).sort()).toEqual([...COMMON, 'ratelimits'].sort());
    expectCommon(d, keyId, 9);
    expect(rl(d, 'auto')).toMatchObject({ exceeded: true, remaining: 0 });
    expect(rl(d, 'other')).toMatchObject({ exceeded: false });
  });

  it('USAGE_EXCEEDED: ratelimits present, credits unchanged', async () => {
    const { key, keyId } = await richKey({ credits: { remaining: 0 } });
    const d = verify(key);
    expect(d).toMatchObject({ valid: false, code: 'USAGE_EXCEEDED' });
    expect(Object.keys(d).sort()).toEqual([...COMMON, 'ratelimits'].sort());
    expectCommon(d, keyId, 0);
    expect((d.ratelimits as Data[]).every((r) => r.exceeded === false)).toBe(true);
  });

  it.each([
    ['DISABLED', { enabled: false }, {}],
    ['EXPIRED', {}, { now: T0 + 3_600_001 }],
    ['INSUFFICIENT_PERMISSIONS', {}, { query: 'nope' }],
  ] as const)('%s: the key fields, no ratelimits, credits unchanged', async (expected, extra, opts) => {
    const { key, keyId } = await richKey(extra);
    const d = verify(key, opts);
    expect(d).toMatchObject({ valid: false, code: expected, enabled: expected !== 'DISABLED' });
    expect(Object.keys(d).sort()).toEqual(COMMON.slice().sort());
    expectCommon(d, keyId, 10);
  });

  it('strings are JSON-escaped: name, role names, limit names, meta', async () => {
    const weird = 'q"uote \\ back\nline\ttab \u0001 \u001f é 😀 \u2028 </script>';
    const roleName = `role ${weird}`;
    await createRole({ name: roleName }, ctx());
    const meta = { s: weird, n: -1.5e-7, big: 9007199254740991, nested: [{ '"k"': null }, true] };
    const limitName = `lim "${'ü'}\\ 😀`;
    const { key } = await newKey({ name: weird, meta, roles: [roleName], ratelimits: [limit(limitName, 3, MIN, true)] });
    const d = verify(key);
    expect(d.name).toBe(weird);
    expect(d.meta).toEqual(meta);
    expect(d.roles).toEqual([roleName]);
    expect(rl(d, limitName)).toMatchObject({ remaining: 2 });
    expect(verify(key, { named: [[limitName, 2]] }).code).toBe('VALID');
  });

  it('unset fields are omitted', async () => {
    const { key, keyId } = await newKey();
    expect(Object.keys(verify(key)).sort()).toEqual(['code', 'enabled', 'keyId', 'valid']);
    expect(verify(key).keyId).toBe(keyId);
  });
});

describe("the spec's States and transitions table", () => {
  it('createKey enabled → VALID; enabled=false → DISABLED', async () => {
    expect(code((await newKey({ enabled: true })).key)).toBe('VALID');
    expect(code((await newKey({ enabled: false })).key)).toBe('DISABLED');
  });

  it('VALID --verify, remaining ≥ cost--> VALID with credits reduced by cost', async () => {
    const { key } = await newKey({ credits: { remaining: 10 } });
    expect(verify(key)).toMatchObject({ code: 'VALID', credits: 9 });
    expect(verify(key, { cost: 4 })).toMatchObject({ code: 'VALID', credits: 5 });
  });

  it('VALID --verify, cost 0--> VALID, balance unchanged', async () => {
    const { key, keyId } = await newKey({ credits: { remaining: 2 } });
    expect(verify(key, { cost: 0 })).toMatchObject({ code: 'VALID', credits: 2 });
    expect(balance(keyId)).toBe(2);
  });

  it('VALID --verify, remaining < cost or 0--> USAGE_EXCEEDED with credits returned', async () => {
    const { key } = await newKey({ credits: { remaining: 2 } });
    expect(verify(key, { cost: 3 })).toMatchObject({ valid: false, code: 'USAGE_EXCEEDED', credits: 2 });
    expect(verify(key, { cost: 2 })).toMatchObject({ code: 'VALID', credits: 0 });
    expect(verify(key, { cost: 0 })).toMatchObject({ valid: false, code: 'USAGE_EXCEEDED', credits: 0 });
  });

  it('USAGE_EXCEEDED --updateCredits set--> VALID', async () => {
    const { key, keyId } = await newKey({ credits: { remaining: 0 } });
    expect(code(key)).toBe('USAGE_EXCEEDED');
    expect(await updateCredits({ keyId, operation: 'set', value: 2 }, ctx())).toMatchObject({ remaining: 2 });
    expect(verify(key)).toMatchObject({ code: 'VALID', credits: 1 });
  });

  it('USAGE_EXCEEDED --updateCredits increment--> VALID (only once the balance covers the cost)', async () => {
    const { key, keyId } = await newKey({ credits: { remaining: 1 } });
    expect(code(key, { cost: 3 })).toBe('USAGE_EXCEEDED');
    await updateCredits({ keyId, operation: 'increment', value: 1 }, ctx());
    expect(verify(key, { cost: 3 })).toMatchObject({ code: 'USAGE_EXCEEDED', credits: 2 });
    await updateCredits({ keyId, operation: 'increment', value: 1 }, ctx());
    expect(verify(key, { cost: 3 })).toMatchObject({ code: 'VALID', credits: 0 });
  });

  it('VALID --time passes expires--> EXPIRED', async () => {
    const { key } = await newKey({ expires: T0 + 1 });
    expect(code(key, { now: T0 + 1 })).toBe('VALID');
    expect(code(key, { now: T0 + 2 })).toBe('EXPIRED');
  });

  it('VALID --updateKey credits:null--> VALID, unlimited', async () => {
    const { key, keyId } = await newKey({ credits: { remaining: 1 } });
    expect(verify(key).credits).toBe(0);
    expect(code(key)).toBe('USAGE_EXCEEDED');
    await updateKey({ keyId, credits: null }, ctx());
    for (let i = 0; i < 3; i++) {
      const d = verify(key, { cost: 5 });
      expect(d.code).toBe('VALID');
      expect(d).not.toHaveProperty('credits');
    }
    expect(balance(keyId)).toBeUndefined();
  });
});
