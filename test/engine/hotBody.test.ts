// The hot procedures served straight from the body bytes (Route.fromBody, native/src/body.rs).
// Contract: a body the engine's reader accepts — strings with escapes and raw UTF-8 included,
// decoded as JSON.parse decodes them — gets exactly the reply the full way (JSON.parse, ajv,
// the handler, which hands the validated input re-serialised to the same engine entry with
// the VALIDATED flag) gives in the same state, errors included. A body the reader does not
// accept (one the schema refuses, a number with a fraction or an exponent, a repeated field,
// an unpaired surrogate escape, invalid UTF-8) or that names a namespace that does not exist
// yet or is out of the root key's scope is declined: fromBody returns undefined, the store is
// unchanged, and the full way answers it.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { tempStore } from '../helpers/tempStore.js';
import { bootstrap } from '../../src/bootstrap.js';
import { loadConfig } from '../../src/config.js';
import { Effect, type Served } from '../../src/engine/hotCalls.js';
import { native } from '../../src/engine/native.js';
import { createLogger } from '../../src/log.js';
import { Principal } from '../../src/auth/permissions.js';
import { createApi } from '../../src/procedures/apis/createApi.js';
import { createKey, type CreateKeyInput } from '../../src/procedures/keys/createKey.js';
import { verifyKeyFromBody } from '../../src/procedures/keys/verifyKey.js';
import { limitFromBody } from '../../src/procedures/ratelimits/limit.js';
import { multiLimitFromBody } from '../../src/procedures/ratelimits/multiLimit.js';
import { setOverride } from '../../src/procedures/ratelimits/setOverride.js';
import type { Ctx } from '../../src/request/context.js';
import { directCtx } from '../../src/request/direct.js';
import { Dispatcher } from '../../src/rpc/dispatch.js';
import { ROUTES, type Route } from '../../src/rpc/routes.js';
import { threadServices } from '../../src/serve.js';
import { direct } from '../../src/store/db.js';
import { ensureNamespace, findNamespace } from '../../src/store/ratelimits.js';
import { insertRootKey } from '../../src/store/rootKeys.js';
import { newRequestId } from '../../src/rpc/requestId.js';

const ROOT = 'kwroot_hotbody_aaaaaaaaaaaaaaaaaaaaaaaa';
const T0 = Date.UTC(2026, 0, 15, 12, 0, 7);
const HOUR = 3_600_000;

tempStore('keyward-hot-body-');
let ws = '';
beforeAll(() => {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(T0);
  ws = (direct.transact(() => bootstrap(ROOT, T0)) as { workspaceId: string }).workspaceId;
});
afterAll(() => vi.useRealTimers());

/** A serving thread's services as the server builds them (its durability gate turns group commit on), shared by both dispatchers. */
const { services } = threadServices(loadConfig({}), createLogger('silent'), false);
/** The server's dispatcher, and one whose routes have no fromBody: every body goes the full way. */
const fast = new Dispatcher('http://keyward.test', services);
const full = new Dispatcher('http://keyward.test', services, ROUTES.map((r) => (r.kind === 'hot' ? { ...r, fromBody: undefined } : r)));

type FromBody = (body: Uint8Array, ctx: Ctx) => Served | undefined;

const encode = (body: string | Uint8Array): Uint8Array => (typeof body === 'string' ? new TextEncoder().encode(body) : body);
const anyRequestId = (text: string): string => text.replace(/"requestId":"req_\w+"/, '"requestId":"req_x"');

function ctx(principal = new Principal(ws, 'rk_test', ['*'])): Ctx {
  return directCtx(principal, T0);
}

/**
 * The end of the event-loop turn: the batch a hot call opened (group commit is on) is
 * committed, as the durability gate commits it, before anything else writes; so is one a
 * management write opened through the gate (its own end-of-turn commit may not have run yet).
 */
function endTurn(effect: Effect): void {
  if (effect === Effect.OpenedBatch) expect(native.batchCommit()).toBe(true);
  services.gate.closeBatch();
}

async function post(d: Dispatcher, procedure: string, body: unknown, rootKey = ROOT): Promise<{ status: number; body: string }> {
  const bytes = typeof body === 'string' || body instanceof Uint8Array ? encode(body) : encode(JSON.stringify(body));
  const result = d.dispatch(d.lookup(procedure), `Bearer ${rootKey}`, bytes);
  // A reply given at once ends its turn here, before anything else can run.
  const { reply, effect } = result instanceof Promise ? await result : result;
  endTurn(effect);
  return { status: reply.status, body: anyRequestId(reply.body) };
}

/** A fromBody entry called as the dispatcher calls it. */
function fromBody(entry: FromBody, body: string | Uint8Array, c = ctx()): Served | undefined {
  const served = entry(encode(body), c);
  if (served !== undefined) endTurn(served.effect);
  return served;
}

/** The entry declines the body, having changed nothing in the store. */
function expectDeclined(entry: FromBody, body: string | Uint8Array, c = ctx()): void {
  const what = typeof body === 'string' ? body : Buffer.from(body).toString('latin1');
  const before = native.stats().lastTxnId;
  expect(fromBody(entry, body, c), what).toBeUndefined();
  expect(native.stats().lastTxnId, what).toBe(before);
}

/**
 * `body('~A~')` straight from the body bytes and `body('~B~')` the full way, in the same
 * state: the same reply but for the tag. Returns the reply's data.
 */
async function servedAlike(procedure: string, entry: FromBody, body: (tag: string) => string) {
  const one = fromBody(entry, body('~A~'));
  expect(one, body('~A~')).toBeDefined();
  const two = await post(full, procedure, body('~B~'));
  expect(two.status, body('~B~')).toBe(200);
  expect(anyRequestId((one as Served).body).replaceAll('~A~', '~B~'), body('~A~')).toBe(two.body);
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return (JSON.parse(two.body) as { data: any }).data;
}

/** A string written entirely with \u escapes, inside a JSON string. */
const escaped = (s: string): string => [...s].map((c) => `\\u${(c.codePointAt(0) as number).toString(16).padStart(4, '0')}`).join('');

/** Two keys made alike: one is verified the fast way, its twin the full way, in the same state. */
async function twins(opts: Partial<CreateKeyInput> = {}): Promise<[{ key: string; keyId: string }, { key: string; keyId: string }]> {
  const apiId = (await createApi({ name: 'hot-body' }, ctx())).apiId;
  const make = () => createKey({ byteLength: 16, enabled: true, recoverable: false, ...opts, apiId }, ctx());
  // Of equal length: a JSON error's position in the body must come out the same for both.
  // 16 random bytes in base58 are 20 to 22 characters (22 for ~97%), so among any four keys
  // two share a length (pigeonhole); the first pair found is returned.
  const byLength = new Map<number, { key: string; keyId: string }>();
  for (;;) {
    const k = await make();
    const twin = byLength.get(k.key.length);
    if (twin) return [twin, k];
    byLength.set(k.key.length, k);
  }
}

/** The twins' own ids (key, rate limits) are the only difference allowed between their replies. */
const ids = (text: string, keyId: string) => text.replaceAll(keyId, 'key_x').replace(/"id":"rl_\w+"/g, '"id":"rl_x"');

/** Verifies `a` the fast way and `b` the full way with the same body otherwise; the replies must match. */
async function verifyBoth(a: { key: string; keyId: string }, b: { key: string; keyId: string }, rest: Record<string, unknown> = {}, rootKey = ROOT) {
  const one = await post(fast, 'keys.verifyKey', { key: a.key, ...rest }, rootKey);
  const two = await post(full, 'keys.verifyKey', { key: b.key, ...rest }, rootKey);
  expect(ids(one.body, a.keyId)).toBe(ids(two.body, b.keyId));
  expect(one.status).toBe(two.status);
  return { status: one.status, data: JSON.parse(one.body) as { data?: Record<string, unknown>; error?: { detail: string } } };
}

/** `body(a.key)` straight from the body bytes and `body(b.key)` the full way: the same reply. */
async function verifyServedAlike(a: { key: string; keyId: string }, b: { key: string; keyId: string }, body: (key: string) => string) {
  const one = fromBody(verifyKeyFromBody, body(a.key));
  expect(one, body(a.key)).toBeDefined();
  const two = await post(full, 'keys.verifyKey', body(b.key));
  expect(ids(anyRequestId((one as Served).body), a.keyId)).toBe(ids(two.body, b.keyId));
  expect(two.status).toBe(200);
  return (JSON.parse(two.body) as { data: Record<string, unknown> }).data;
}

describe('keys.verifyKey from the body', () => {
  it('a plain key', async () => {
    const [a, b] = await twins({ name: 'plain', meta: { plan: 'pro' } });
    for (let i = 0; i < 2; i++) expect((await verifyBoth(a, b)).data.data?.code).toBe('VALID');
  });

  it('credits: default cost, cost 0, an explicit cost, then USAGE_EXCEEDED', async () => {
    const [a, b] = await twins({ credits: { remaining: 5 } });
    expect((await verifyBoth(a, b)).data.data?.credits).toBe(4);
    expect((await verifyBoth(a, b, { credits: { cost: 0 } })).data.data?.credits).toBe(4);
    expect((await verifyBoth(a, b, { credits: { cost: 3 } })).data.data?.credits).toBe(1);
    expect((await verifyBoth(a, b, { credits: { cost: 2 } })).data.data?.code).toBe('USAGE_EXCEEDED');
  });

  it('an autoApply limit, a named stored limit, an ad-hoc limit, and RATE_LIMITED', async () => {
    const [a, b] = await twins({ ratelimits: [{ name: 'auto', limit: 3, duration: HOUR, autoApply: true }, { name: 'named', limit: 10, duration: HOUR, autoApply: false }] });
    await verifyBoth(a, b);
    await verifyBoth(a, b, { ratelimits: [{ name: 'named', cost: 4 }] });
    await verifyBoth(a, b, { ratelimits: [{ name: 'adhoc', limit: 1, duration: 60_000 }], tags: ['a', 'b'] });
    expect((await verifyBoth(a, b, { ratelimits: [{ name: 'adhoc', limit: 1, duration: 60_000 }] })).data.data?.code).toBe('RATE_LIMITED');
  });

  it('permission queries: satisfied, not satisfied, and a syntax error (400)', async () => {
    const [a, b] = await twins({ permissions: ['docs.read', 'docs.write'] });
    expect((await verifyBoth(a, b, { permissions: 'docs.read AND (docs.write OR admin)' })).data.data?.code).toBe('VALID');
    expect((await verifyBoth(a, b, { permissions: 'admin' })).data.data?.code).toBe('INSUFFICIENT_PERMISSIONS');
    expect((await verifyBoth(a, b, { permissions: 'docs.read AND' })).status).toBe(400);
  });

  it('a limit neither the key nor its identity has (412)', async () => {
    const [a, b] = await twins();
    expect((await verifyBoth(a, b, { ratelimits: [{ name: 'nope' }] })).status).toBe(412);
  });

  it('unknown keys, disabled and expired keys', async () => {
    const unknown = { key: 'sk_unknown', keyId: 'x' };
    expect((await verifyBoth(unknown, unknown)).data.data?.code).toBe('NOT_FOUND');
    const [a, b] = await twins({ enabled: false });
    expect((await verifyBoth(a, b)).data.data?.code).toBe('DISABLED');
    const [c, d] = await twins({ expires: T0 - 1 });
    expect((await verifyBoth(c, d)).data.data?.code).toBe('EXPIRED');
  });

  it('a root key that may verify only another API gets NOT_FOUND; one with no verify grant gets 403 the full way', async () => {
    const [a, b] = await twins();
    direct.transact(() => insertRootKey(ws, 'kwroot_hotbody_other_aaaaaaaaaaaaaaaaaa', ['apis.api_other.verify_key'], T0));
    expect((await verifyBoth(a, b, {}, 'kwroot_hotbody_other_aaaaaaaaaaaaaaaaaa')).data.data?.code).toBe('NOT_FOUND');
    direct.transact(() => insertRootKey(ws, 'kwroot_hotbody_none_aaaaaaaaaaaaaaaaaaa', ['apis.*.read_key'], T0));
    expectDeclined(verifyKeyFromBody, JSON.stringify({ key: a.key }), ctx(new Principal(ws, 'rk_none', ['apis.*.read_key'])));
    expect((await verifyBoth(a, b, {}, 'kwroot_hotbody_none_aaaaaaaaaaaaaaaaaaa')).status).toBe(403);
  });

  it('strings with escapes and raw UTF-8 are served from the body, decoded as the full way decodes them', async () => {
    const name = 'lim "é" \\ 😀';
    const [a, b] = await twins({ credits: { remaining: 10 }, ratelimits: [{ name, limit: 5, duration: HOUR, autoApply: false }] });
    // The key written entirely with \u escapes.
    expect(await verifyServedAlike(a, b, (key) => `{"key":"${escaped(key)}"}`)).toMatchObject({ code: 'VALID', credits: 9 });
    // A limit name with \", \\, \u00e9 and a surrogate pair; then the same name as raw UTF-8.
    const viaEscapes = await verifyServedAlike(a, b, (key) => String.raw`{"key":"${key}","ratelimits":[{"name":"lim \"\u00e9\" \\ \ud83d\ude00","cost":2}]}`);
    expect(viaEscapes).toMatchObject({ code: 'VALID', credits: 8, ratelimits: [{ name, remaining: 3 }] });
    const raw = await verifyServedAlike(a, b, (key) => JSON.stringify({ key, ratelimits: [{ name, cost: 3 }] }));
    expect(raw).toMatchObject({ code: 'VALID', credits: 7, ratelimits: [{ name, remaining: 0 }] });
    // Unknown keys with every kind of escape, and in raw UTF-8.
    const unknown = { key: 'sk_unknown', keyId: 'key_none' };
    expect(await verifyServedAlike(unknown, unknown, () => String.raw`{"key":"sk_\"q\" \\ \/ \u00e9 \ud83d\ude00 \n\t"}`)).toEqual({ valid: false, code: 'NOT_FOUND' });
    expect(await verifyServedAlike(unknown, unknown, () => '{"key":"sk_é😀ключ"}')).toEqual({ valid: false, code: 'NOT_FOUND' });
  });

  it('a limit name with a control character is declined; the full way answers 400', async () => {
    const [a, b] = await twins({ credits: { remaining: 5 } });
    expectDeclined(verifyKeyFromBody, JSON.stringify({ key: a.key, ratelimits: [{ name: 'r\nr' }] }));
    expect((await verifyBoth(a, b, { ratelimits: [{ name: 'r\nr' }] })).status).toBe(400);
    expect((await verifyBoth(a, b, { credits: { cost: 0 } })).data.data?.credits).toBe(5);
  });

  it('bodies the reader does not take are declined and left to the full way, which answers them', async () => {
    const [a, b] = await twins({ prefix: 'hb', credits: { remaining: 5 } });
    const bodies = (k: string): (string | Uint8Array)[] => [
      // The full way accepts these four (JSON.parse reads them to a body the schema takes).
      `{"key":"${k}","credits":{"cost":1.0}}`,
      `{"key":"${k}","credits":{"cost":1e0}}`,
      `{"key":"${k}","key":"${k}"}`,
      `{"key":"${k}","credits":{"cost":1},"credits":{"cost":1}}`,
      // The full way refuses these (400).
      `{"key":"${k}","ratelimits":[{"name":"x","limit":1}]}`,
      `{"key":"${k}","ratelimits":[{"name":"xyz","limit":1}]}`,
      `{"key":"${k}","credits":{}}`,
      `{"key":"${k}","credits":{"cost":-1}}`,
      `{"key":"${k}","extra":true}`,
      `{"key":"${k}"`,
      `{"key":"${k}"} {}`,
      `{"key":""}`,
      `{"key":"${k}","permissions":""}`,
      `[]`,
      ``,
      // Not text: an unpaired surrogate escape, bytes that are not UTF-8 (400).
      `{"key":"\\ud800${k.slice(1)}"}`,
      new Uint8Array([...new TextEncoder().encode(`{"key":"${k}`), 0xff, ...new TextEncoder().encode('"}')]),
    ];
    const [ours, theirs] = [bodies(a.key), bodies(b.key)];
    for (const [i, body] of ours.entries()) {
      const what = typeof body === 'string' ? body : `bytes of ${Buffer.from(body).toString('latin1')}`;
      expectDeclined(verifyKeyFromBody, body);
      const one = await post(fast, 'keys.verifyKey', body);
      const two = await post(full, 'keys.verifyKey', theirs[i] as string | Uint8Array);
      expect(one.status, what).toBe(two.status);
      expect(one.body, what).toBe(two.body.replaceAll(b.keyId, a.keyId));
    }
    // An escaped key is no longer one of them: served from the body, with the full way's reply.
    expect(await verifyServedAlike(a, b, (k) => `{"key":"\\u0068${k.slice(1)}"}`)).toMatchObject({ code: 'VALID', credits: 0 });
    // The four bodies the full way accepts (cost 1.0, cost 1e0, a repeated key, a repeated
    // credits) and the escaped key each spent one credit, on both keys alike.
    expect((await verifyBoth(a, b, { credits: { cost: 0 } })).data.data).toMatchObject({ code: 'USAGE_EXCEEDED', credits: 0 });
  });
});

describe('routes', () => {
  it('a route with permission rules cannot have fromBody (it would skip them)', () => {
    const route = ROUTES.find((r) => r.procedure === 'ratelimits.limit') as Route;
    expect(route.kind).toBe('hot');
    const withRules: Route = { ...route, permissions: [{ resource: 'ratelimits', action: 'limit' }] };
    expect(() => new Dispatcher('http://keyward.test', services, [withRules])).toThrow(/ratelimits.limit: a route with permission rules cannot have fromBody/);
  });
});

describe('ratelimits.limit and multiLimit from the body', () => {
  /** `limit` for identifier `<id>-a` the fast way and `<id>-b` the full way: the replies must match. */
  async function limitBoth(id: string, rest: Record<string, unknown> = {}, rootKey = ROOT) {
    const body = (suffix: string) => ({ namespace: 'hot', identifier: `${id}-${suffix}`, limit: 3, duration: HOUR, ...rest });
    const one = await post(fast, 'ratelimits.limit', body('a'), rootKey);
    const two = await post(full, 'ratelimits.limit', body('b'), rootKey);
    expect(one).toEqual(two);
    return JSON.parse(one.body) as { data: { success: boolean; remaining: number; overrideId?: string } };
  }

  const hotId = (): string => (findNamespace(ws, 'hot') as { id: string }).id;

  beforeAll(async () => {
    await post(full, 'ratelimits.limit', { namespace: 'hot', identifier: 'creates-it', limit: 1, duration: 1000 });
  });

  it('admits up to the limit, then refuses; cost 0 peeks; a larger cost', async () => {
    expect((await limitBoth('u1')).data.remaining).toBe(2);
    expect((await limitBoth('u1', { cost: 0 })).data.remaining).toBe(2);
    expect((await limitBoth('u1', { cost: 2 })).data.remaining).toBe(0);
    expect((await limitBoth('u1')).data.success).toBe(false);
  });

  it('an override matching both identifiers applies the same way', async () => {
    const { overrideId } = await setOverride({ namespace: 'hot', identifier: 'vip-*', limit: 1, duration: HOUR }, ctx());
    expect((await limitBoth('vip')).data).toMatchObject({ success: true, remaining: 0, overrideId });
    expect((await limitBoth('vip')).data.success).toBe(false);
  });

  it('a namespace that does not exist yet is left to the full way, which creates it; one named by its id is served from the body', async () => {
    const body = (namespace: string, identifier = 'x') => JSON.stringify({ namespace, identifier, limit: 1, duration: 1000 });
    expectDeclined(limitFromBody, body('brand-new'));
    expect(findNamespace(ws, 'brand-new')).toBeUndefined();
    expectDeclined(multiLimitFromBody, `[${body('hot')},${body('brand-new')}]`);
    expect(findNamespace(ws, 'brand-new')).toBeUndefined();
    expect(JSON.parse((await post(fast, 'ratelimits.limit', body('brand-new'))).body).data.success).toBe(true);
    expect(findNamespace(ws, 'brand-new')).toBeDefined();
    expect(fromBody(limitFromBody, body('brand-new', 'y'))).toBeDefined();
    // By its rlns_ id (and an id of no namespace of the workspace, declined).
    expect(await servedAlike('ratelimits.limit', limitFromBody, (tag) => body(hotId(), `by-id-${tag}`))).toEqual({ success: true, limit: 1, remaining: 0, reset: T0 - (T0 % 1000) + 1000 });
    expectDeclined(limitFromBody, body('rlns_not_one_of_ours'));
    expect(JSON.parse((await post(fast, 'ratelimits.limit', { namespace: hotId(), identifier: 'by-id', limit: 1, duration: 1000 })).body).data.success).toBe(true);
  });

  it('a root key allowed some namespaces by id is answered from the body in those only; the full way checks the rest', async () => {
    const id = hotId();
    const hot = '{"namespace":"hot","identifier":"scoped-fast","limit":1,"duration":1000}';
    for (const grants of [[`ratelimits.${id}.limit`], ['ratelimits.rlns_other.limit', `ratelimits.${id}.limit`]]) {
      expect(fromBody(limitFromBody, hot, ctx(new Principal(ws, 'rk_some', grants))), grants.join()).toBeDefined();
      expect(fromBody(multiLimitFromBody, `[${hot}]`, ctx(new Principal(ws, 'rk_some', grants))), grants.join()).toBeDefined();
    }
    for (const grants of [['ratelimits.rlns_other.limit'], ['ratelimits.*.create_namespace'], [`ratelimits.${id}x.limit`]]) {
      expectDeclined(limitFromBody, hot, ctx(new Principal(ws, 'rk_none', grants)));
      expectDeclined(multiLimitFromBody, `[${hot}]`, ctx(new Principal(ws, 'rk_none', grants)));
    }
    direct.transact(() => insertRootKey(ws, 'kwroot_hotbody_ns_aaaaaaaaaaaaaaaaaaaaa', [`ratelimits.${id}.limit`], T0));
    expect((await limitBoth('scoped', {}, 'kwroot_hotbody_ns_aaaaaaaaaaaaaaaaaaaaa')).data.success).toBe(true);
    direct.transact(() => insertRootKey(ws, 'kwroot_hotbody_no_aaaaaaaaaaaaaaaaaaaaa', ['ratelimits.rlns_other.limit'], T0));
    const refused = await post(fast, 'ratelimits.limit', { namespace: 'hot', identifier: 'x', limit: 1, duration: 1000 }, 'kwroot_hotbody_no_aaaaaaaaaaaaaaaaaaaaa');
    expect(refused.status).toBe(403);
  });

  it('identifiers and namespaces with escapes and raw UTF-8 are served from the body, decoded as the full way decodes them', async () => {
    // An identifier with \", \\, \u00e9 and a surrogate pair, counting in the same window as raw UTF-8 of it.
    const viaEscapes = (tag: string) => String.raw`{"namespace":"hot","identifier":"esc \"q\" \\ \u00e9 \ud83d\ude00 ${tag}","limit":3,"duration":3600000}`;
    expect(await servedAlike('ratelimits.limit', limitFromBody, viaEscapes)).toMatchObject({ success: true, remaining: 2 });
    const raw = (tag: string) => JSON.stringify({ namespace: 'hot', identifier: `esc "q" \\ é 😀 ${tag}`, limit: 3, duration: HOUR });
    expect(await servedAlike('ratelimits.limit', limitFromBody, raw)).toMatchObject({ success: true, remaining: 1 });
    // The old plain-form refusals: an escaped namespace name, a non-ASCII identifier.
    expect(await servedAlike('ratelimits.limit', limitFromBody, (tag) => `{"namespace":"h\\u006ft","identifier":"p-${tag}","limit":3,"duration":3600000}`)).toMatchObject({ success: true, remaining: 2 });
    expect(await servedAlike('ratelimits.limit', limitFromBody, (tag) => `{"namespace":"hot","identifier":"p\u00e9-${tag}","limit":3,"duration":3600000}`)).toMatchObject({ success: true, remaining: 2 });
    // A namespace whose name has all of them, named with escapes and as raw UTF-8.
    const name = 'ns "é" \\ 😀 ключ';
    direct.transact(() => ensureNamespace(ws, name, T0));
    const nsEscaped = (tag: string) => String.raw`{"namespace":"ns \"\u00e9\" \\ \ud83d\ude00 \u043a\u043b\u044e\u0447","identifier":"n-${tag}","limit":3,"duration":3600000}`;
    expect(await servedAlike('ratelimits.limit', limitFromBody, nsEscaped)).toMatchObject({ success: true, remaining: 2 });
    expect(await servedAlike('ratelimits.limit', limitFromBody, (tag) => JSON.stringify({ namespace: name, identifier: `n-${tag}`, limit: 3, duration: HOUR }))).toMatchObject({ success: true, remaining: 1 });
    // multiLimit echoes each namespace and identifier decoded, as the request named them.
    const many = await servedAlike('ratelimits.multiLimit', multiLimitFromBody, (tag) => `[${nsEscaped(tag)},${viaEscapes(tag)}]`);
    expect(many).toEqual({
      passed: true,
      limits: [
        { namespace: name, identifier: 'n-~B~', limit: 3, remaining: 0, reset: expect.any(Number), passed: true },
        { namespace: 'hot', identifier: 'esc "q" \\ é 😀 ~B~', limit: 3, remaining: 0, reset: expect.any(Number), passed: true },
      ],
    });
  });

  it('multiLimit: the same reply from the body as the full way, with namespaces echoed as named (by name or rlns_ id) and override ids, all or nothing', async () => {
    const id = hotId();
    const { overrideId } = await setOverride({ namespace: 'hot', identifier: 'mvip-*', limit: 1, duration: HOUR }, ctx());
    const items = (tag: string, cost = 1) =>
      JSON.stringify([
        { namespace: 'hot', identifier: `m1-${tag}`, limit: 3, duration: HOUR, cost },
        { namespace: id, identifier: `mvip-${tag}`, limit: 5, duration: HOUR, cost },
      ]);
    const first = await servedAlike('ratelimits.multiLimit', multiLimitFromBody, (tag) => items(tag));
    expect(first).toMatchObject({
      passed: true,
      limits: [
        { namespace: 'hot', identifier: 'm1-~B~', limit: 3, remaining: 2, passed: true },
        { namespace: id, identifier: 'mvip-~B~', limit: 1, remaining: 0, passed: true, overrideId },
      ],
    });
    expect(first.limits[0]).not.toHaveProperty('overrideId');
    // The override's limit of 1 is used up: refused, and nothing consumed.
    const refused = await servedAlike('ratelimits.multiLimit', multiLimitFromBody, (tag) => items(tag));
    expect(refused).toMatchObject({ passed: false, limits: [{ passed: true, remaining: 2 }, { passed: false, remaining: 0, overrideId }] });
    // Cost 0 peeks: at its limit exactly, the override's item still passes with nothing left.
    expect(await servedAlike('ratelimits.multiLimit', multiLimitFromBody, (tag) => items(tag, 0))).toMatchObject({ passed: true, limits: [{ remaining: 2 }, { remaining: 0, overrideId }] });
    // And through the server's dispatcher: the same replies both ways.
    const one = await post(fast, 'ratelimits.multiLimit', items('~A~', 0));
    const two = await post(full, 'ratelimits.multiLimit', items('~B~', 0));
    expect(one.body.replaceAll('~A~', '~B~')).toBe(two.body);
    expect(one.status).toBe(200);
  });

  it('bodies the reader does not take are declined and left to the full way', async () => {
    const invalidUtf8 = new Uint8Array([...new TextEncoder().encode('{"namespace":"hot","identifier":"p'), 0xc3, 0x28, ...new TextEncoder().encode('","limit":3,"duration":3600000}')]);
    for (const body of [
      // The full way accepts these.
      '{"namespace":"hot","identifier":"p","limit":3,"duration":3600000,"cost":1.0}',
      '{"namespace":"hot","identifier":"p","limit":3,"duration":3.6e6}',
      '{"namespace":"hot","identifier":"p","identifier":"p","limit":3,"duration":3600000}',
      // The full way refuses these (400).
      '{"namespace":"hot","identifier":"p","limit":3,"duration":999}',
      '{"namespace":"hot","identifier":"p","limit":0,"duration":3600000}',
      '{"namespace":"hot","identifier":"p","limit":3}',
      '{"namespace":"hot","identifier":"p","limit":3,"duration":3600000,"extra":1}',
      `{"namespace":"hot","identifier":"${'p'.repeat(513)}","limit":3,"duration":3600000}`,
      '{"namespace":"","identifier":"p","limit":3,"duration":3600000}',
      '[]',
      invalidUtf8,
    ]) {
      const what = typeof body === 'string' ? body : 'invalid UTF-8';
      expectDeclined(limitFromBody, body);
      const other = typeof body === 'string' ? body.replaceAll('"p', '"q') : invalidUtf8;
      expect(await post(fast, 'ratelimits.limit', body), what).toEqual(await post(full, 'ratelimits.limit', other));
      if (typeof body === 'string' && body.startsWith('{')) {
        expectDeclined(multiLimitFromBody, `[${body}]`);
        // multiLimit's reply echoes the identifier.
        const one = await post(fast, 'ratelimits.multiLimit', `[${body}]`);
        const two = await post(full, 'ratelimits.multiLimit', `[${other}]`);
        expect(one, what).toEqual({ ...two, body: two.body.replaceAll('"identifier":"q"', '"identifier":"p"') });
      }
    }
  });

  it('an unpaired surrogate escape is declined; the full way answers 400', async () => {
    for (const body of ['{"namespace":"hot","identifier":"p\\ud800","limit":3,"duration":3600000}', '{"namespace":"hot","identifier":"p\\udc00\\ud800","limit":3,"duration":3600000}']) {
      expectDeclined(limitFromBody, body);
      const one = await post(fast, 'ratelimits.limit', body);
      const two = await post(full, 'ratelimits.limit', body.replace('"p', '"q'));
      expect(one, body).toEqual(two);
      expect(one.status, `${body}: ${one.body}`).toBe(400);
    }
  });
});

describe('request ids', () => {
  it('replies answered from the body, the full way and errors draw distinct ids from one sequence per thread', async () => {
    const [a] = await twins();
    const requestId = async (procedure: string, body: string): Promise<string> => {
      const result = fast.dispatch(fast.lookup(procedure), `Bearer ${ROOT}`, new TextEncoder().encode(body));
      const { reply, effect } = result instanceof Promise ? await result : result;
      endTurn(effect);
      return (JSON.parse(reply.body) as { meta: { requestId: string } }).meta.requestId;
    };
    const ids = [
      await requestId('keys.verifyKey', JSON.stringify({ key: a.key })),
      await requestId('ratelimits.limit', '{"namespace":"hot","identifier":"ids","limit":9,"duration":60000}'),
      await requestId('keys.verifyKey', `{"key":${JSON.stringify(a.key)},"credits":{"cost":1.0}}`),
      await requestId('keys.verifyKey', '{"key":'),
      await requestId('keys.verifyKey', JSON.stringify({ key: a.key, permissions: 'a AND' })),
      newRequestId(),
      await requestId('ratelimits.limit', '{"namespace":"hot","identifier":"ids","limit":9,"duration":60000}'),
      await requestId('ratelimits.multiLimit', '[{"namespace":"hot","identifier":"ids","limit":9,"duration":60000}]'),
      await requestId('ratelimits.limit', '{"namespace":"hot","identifier":"ids","limit":9,"duration":60000,"cost":1.0}'),
    ];
    expect(ids.every((id) => /^req_[A-Za-z0-9]{16}$/.test(id)), ids.join(' ')).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    // One prefix, and counters that only go up.
    expect(new Set(ids.map((id) => id.slice(4, 12))).size).toBe(1);
    const counters = ids.map((id) => parseInt(id.slice(12), 36));
    expect(counters).toEqual([...counters].sort((x, y) => x - y));
  });
});
