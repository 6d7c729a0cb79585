// The hot procedures served straight from the body bytes (Route.fromBody, native/src/body.rs).
// Contract: a body in its plain form gets exactly the reply the full way (JSON.parse, ajv,
// handler) gives in the same state, errors included; every other body is left to the full
// way untouched (fromBody returns undefined and the store is unchanged).
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { tempStore } from '../helpers/tempStore.js';
import { bootstrap } from '../../src/bootstrap.js';
import { createLogger } from '../../src/log.js';
import { Principal } from '../../src/auth/permissions.js';
import { createApi } from '../../src/procedures/apis/createApi.js';
import type { Ctx } from '../../src/procedures/context.js';
import { createKey, type CreateKeyInput } from '../../src/procedures/keys/createKey.js';
import { verifyKeyFromBody } from '../../src/procedures/keys/verifyKey.js';
import { limitFromBody } from '../../src/procedures/ratelimits/limit.js';
import { setOverride } from '../../src/procedures/ratelimits/setOverride.js';
import { Dispatcher } from '../../src/rpc/dispatch.js';
import { ROUTES } from '../../src/rpc/routes.js';
import { findNamespace } from '../../src/store/ratelimits.js';
import { transact } from '../../src/store/db.js';
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
  ws = (bootstrap(ROOT, T0) as { workspaceId: string }).workspaceId;
});
afterAll(() => vi.useRealTimers());

const log = createLogger('silent');
/** The server's dispatcher, and one whose routes have no fromBody: every body goes the full way. */
const fast = new Dispatcher('http://keyward.test', log, undefined);
const full = new Dispatcher('http://keyward.test', log, undefined, ROUTES.map((r) => ({ ...r, fromBody: undefined })));

function ctx(principal = new Principal(ws, 'rk_test', ['*'])): Ctx {
  return { principal, nowMs: T0, requestId: 'req_test', vaultKey: undefined };
}

function post(d: Dispatcher, procedure: string, body: unknown, rootKey = ROOT): { status: number; body: string } {
  const bytes = new TextEncoder().encode(typeof body === 'string' ? body : JSON.stringify(body));
  const { reply } = d.dispatch(d.lookup(procedure), `Bearer ${rootKey}`, bytes);
  return { status: reply.status, body: reply.body.replace(/"requestId":"req_\w+"/, '"requestId":"req_x"') };
}

/** Two keys made alike: one is verified the fast way, its twin the full way, in the same state. */
function twins(opts: Partial<CreateKeyInput> = {}): [{ key: string; keyId: string }, { key: string; keyId: string }] {
  const apiId = createApi({ name: 'hot-body' }, ctx()).apiId;
  const make = () => createKey({ byteLength: 16, enabled: true, recoverable: false, ...opts, apiId }, ctx());
  // Of equal length: a JSON error's position in the body must come out the same for both.
  // 16 random bytes in base58 are 20 to 22 characters (22 for ~97%), so among any four keys
  // two share a length (pigeonhole); the first pair found is returned.
  const byLength = new Map<number, { key: string; keyId: string }>();
  for (;;) {
    const k = make();
    const twin = byLength.get(k.key.length);
    if (twin) return [twin, k];
    byLength.set(k.key.length, k);
  }
}

/** Verifies `a` the fast way and `b` the full way with the same body otherwise; the replies must match. */
function verifyBoth(a: { key: string; keyId: string }, b: { key: string; keyId: string }, rest: Record<string, unknown> = {}, rootKey = ROOT) {
  const one = post(fast, 'keys.verifyKey', { key: a.key, ...rest }, rootKey);
  const two = post(full, 'keys.verifyKey', { key: b.key, ...rest }, rootKey);
  // The twins' own ids (key, rate limits) are the only difference allowed.
  const ids = (text: string, keyId: string) => text.replaceAll(keyId, 'key_x').replace(/"id":"rl_\w+"/g, '"id":"rl_x"');
  expect(ids(one.body, a.keyId)).toBe(ids(two.body, b.keyId));
  expect(one.status).toBe(two.status);
  return { status: one.status, data: JSON.parse(one.body) as { data?: Record<string, unknown>; error?: { detail: string } } };
}

describe('keys.verifyKey from the body', () => {
  it('a plain key', () => {
    const [a, b] = twins({ name: 'plain', meta: { plan: 'pro' } });
    for (let i = 0; i < 2; i++) expect(verifyBoth(a, b).data.data?.code).toBe('VALID');
  });

  it('credits: default cost, cost 0, an explicit cost, then USAGE_EXCEEDED', () => {
    const [a, b] = twins({ credits: { remaining: 5 } });
    expect(verifyBoth(a, b).data.data?.credits).toBe(4);
    expect(verifyBoth(a, b, { credits: { cost: 0 } }).data.data?.credits).toBe(4);
    expect(verifyBoth(a, b, { credits: { cost: 3 } }).data.data?.credits).toBe(1);
    expect(verifyBoth(a, b, { credits: { cost: 2 } }).data.data?.code).toBe('USAGE_EXCEEDED');
  });

  it('an autoApply limit, a named stored limit, an ad-hoc limit, and RATE_LIMITED', () => {
    const [a, b] = twins({ ratelimits: [{ name: 'auto', limit: 3, duration: HOUR, autoApply: true }, { name: 'named', limit: 10, duration: HOUR, autoApply: false }] });
    verifyBoth(a, b);
    verifyBoth(a, b, { ratelimits: [{ name: 'named', cost: 4 }] });
    verifyBoth(a, b, { ratelimits: [{ name: 'adhoc', limit: 1, duration: 60_000 }], tags: ['a', 'b'] });
    expect(verifyBoth(a, b, { ratelimits: [{ name: 'adhoc', limit: 1, duration: 60_000 }] }).data.data?.code).toBe('RATE_LIMITED');
  });

  it('permission queries: satisfied, not satisfied, and a syntax error (400)', () => {
    const [a, b] = twins({ permissions: ['docs.read', 'docs.write'] });
    expect(verifyBoth(a, b, { permissions: 'docs.read AND (docs.write OR admin)' }).data.data?.code).toBe('VALID');
    expect(verifyBoth(a, b, { permissions: 'admin' }).data.data?.code).toBe('INSUFFICIENT_PERMISSIONS');
    expect(verifyBoth(a, b, { permissions: 'docs.read AND' }).status).toBe(400);
  });

  it('a limit neither the key nor its identity has (412)', () => {
    const [a, b] = twins();
    expect(verifyBoth(a, b, { ratelimits: [{ name: 'nope' }] }).status).toBe(412);
  });

  it('unknown keys, disabled and expired keys', () => {
    const unknown = { key: 'sk_unknown', keyId: 'x' };
    expect(verifyBoth(unknown, unknown).data.data?.code).toBe('NOT_FOUND');
    const [a, b] = twins({ enabled: false });
    expect(verifyBoth(a, b).data.data?.code).toBe('DISABLED');
    const [c, d] = twins({ expires: T0 - 1 });
    expect(verifyBoth(c, d).data.data?.code).toBe('EXPIRED');
  });

  it('a root key that may verify only another API gets NOT_FOUND; one with no verify grant gets 403 the full way', () => {
    const [a, b] = twins();
    transact(() => insertRootKey(ws, 'kwroot_hotbody_other_aaaaaaaaaaaaaaaaaa', ['apis.api_other.verify_key'], T0));
    expect(verifyBoth(a, b, {}, 'kwroot_hotbody_other_aaaaaaaaaaaaaaaaaa').data.data?.code).toBe('NOT_FOUND');
    transact(() => insertRootKey(ws, 'kwroot_hotbody_none_aaaaaaaaaaaaaaaaaaa', ['apis.*.read_key'], T0));
    expect(verifyKeyFromBody(new TextEncoder().encode(JSON.stringify({ key: a.key })), ctx(new Principal(ws, 'rk_none', ['apis.*.read_key'])))).toBeUndefined();
    expect(verifyBoth(a, b, {}, 'kwroot_hotbody_none_aaaaaaaaaaaaaaaaaaa').status).toBe(403);
  });

  it('bodies out of the plain form are left to the full way, which answers them', () => {
    const [a, b] = twins({ prefix: 'hb', credits: { remaining: 5 } });
    const bodies = (k: string) => [
      `{"key":"${k}","credits":{"cost":1.0}}`,
      `{"key":"${k}","credits":{"cost":1e0}}`,
      `{"key":"\\u0068${k.slice(1)}"}`,
      `{"key":"${k}","key":"${k}"}`,
      `{"key":"${k}","ratelimits":[{"name":"x","limit":1}]}`,
      `{"key":"${k}","credits":{}}`,
      `{"key":"${k}","extra":true}`,
      `{"key":"${k}"`,
      `{"key":"${k}"} {}`,
      `{"key":""}`,
      `[]`,
      ``,
    ];
    const [ours, theirs] = [bodies(a.key), bodies(b.key)];
    ours.forEach((body, i) => {
      expect(verifyKeyFromBody(new TextEncoder().encode(body), ctx()), body).toBeUndefined();
      const [one, two] = [post(fast, 'keys.verifyKey', body), post(full, 'keys.verifyKey', theirs[i] as string)];
      expect(one.status, body).toBe(two.status);
      expect(one.body, body).toBe(two.body.replaceAll(b.keyId, a.keyId));
    });
    // The four bodies the full way accepts (cost 1.0, cost 1e0, an escaped key, a repeated
    // field) each spent one credit, on both keys alike.
    expect(verifyBoth(a, b, { credits: { cost: 0 } }).data.data?.credits).toBe(1);
  });
});

describe('routes', () => {
  it('a route with permission rules cannot have fromBody (it would skip them)', () => {
    const route = ROUTES.find((r) => r.procedure === 'apis.getApi')!;
    expect(() => new Dispatcher('http://keyward.test', log, undefined, [{ ...route, fromBody: () => undefined }])).toThrow(/apis.getApi: a route with permission rules cannot have fromBody/);
  });
});

describe('ratelimits.limit from the body', () => {
  /** `limit` for identifier `<id>-a` the fast way and `<id>-b` the full way: the replies must match. */
  function limitBoth(id: string, rest: Record<string, unknown> = {}, rootKey = ROOT) {
    const body = (suffix: string) => ({ namespace: 'hot', identifier: `${id}-${suffix}`, limit: 3, duration: HOUR, ...rest });
    const one = post(fast, 'ratelimits.limit', body('a'), rootKey);
    const two = post(full, 'ratelimits.limit', body('b'), rootKey);
    expect(one).toEqual(two);
    return JSON.parse(one.body) as { data: { success: boolean; remaining: number; overrideId?: string } };
  }

  beforeAll(() => {
    post(full, 'ratelimits.limit', { namespace: 'hot', identifier: 'creates-it', limit: 1, duration: 1000 });
  });

  it('admits up to the limit, then refuses; cost 0 peeks; a larger cost', () => {
    expect(limitBoth('u1').data.remaining).toBe(2);
    expect(limitBoth('u1', { cost: 0 }).data.remaining).toBe(2);
    expect(limitBoth('u1', { cost: 2 }).data.remaining).toBe(0);
    expect(limitBoth('u1').data.success).toBe(false);
  });

  it('an override matching both identifiers applies the same way', () => {
    const { overrideId } = setOverride({ namespace: 'hot', identifier: 'vip-*', limit: 1, duration: HOUR }, ctx());
    expect(limitBoth('vip').data).toMatchObject({ success: true, remaining: 0, overrideId });
    expect(limitBoth('vip').data.success).toBe(false);
  });

  it('a namespace that does not exist yet, or named by its id, is left to the full way', () => {
    const body = (namespace: string) => new TextEncoder().encode(JSON.stringify({ namespace, identifier: 'x', limit: 1, duration: 1000 }));
    expect(limitFromBody(body('brand-new'), ctx())).toBeUndefined();
    expect(findNamespace(ws, 'brand-new')).toBeUndefined();
    const id = (findNamespace(ws, 'hot') as { id: string }).id;
    expect(limitFromBody(body(id), ctx())).toBeUndefined();
    expect(JSON.parse(post(fast, 'ratelimits.limit', { namespace: id, identifier: 'by-id', limit: 1, duration: 1000 }).body).data.success).toBe(true);
  });

  it('a root key allowed some namespaces by id is answered from the body in those only; the full way checks the rest', () => {
    const id = (findNamespace(ws, 'hot') as { id: string }).id;
    const hot = new TextEncoder().encode('{"namespace":"hot","identifier":"scoped-fast","limit":1,"duration":1000}');
    for (const grants of [[`ratelimits.${id}.limit`], ['ratelimits.rlns_other.limit', `ratelimits.${id}.limit`]]) {
      expect(limitFromBody(hot, ctx(new Principal(ws, 'rk_some', grants))), grants.join()).toBeDefined();
    }
    for (const grants of [['ratelimits.rlns_other.limit'], ['ratelimits.*.create_namespace'], [`ratelimits.${id}x.limit`]]) {
      expect(limitFromBody(hot, ctx(new Principal(ws, 'rk_none', grants))), grants.join()).toBeUndefined();
    }
    transact(() => insertRootKey(ws, 'kwroot_hotbody_ns_aaaaaaaaaaaaaaaaaaaaa', [`ratelimits.${id}.limit`], T0));
    expect(limitBoth('scoped', {}, 'kwroot_hotbody_ns_aaaaaaaaaaaaaaaaaaaaa').data.success).toBe(true);
    transact(() => insertRootKey(ws, 'kwroot_hotbody_no_aaaaaaaaaaaaaaaaaaaaa', ['ratelimits.rlns_other.limit'], T0));
    const refused = post(fast, 'ratelimits.limit', { namespace: 'hot', identifier: 'x', limit: 1, duration: 1000 }, 'kwroot_hotbody_no_aaaaaaaaaaaaaaaaaaaaa');
    expect(refused.status).toBe(403);
  });

  it('bodies out of the plain form are left to the full way', () => {
    for (const body of [
      '{"namespace":"hot","identifier":"p","limit":3,"duration":3600000,"cost":1.0}',
      '{"namespace":"hot","identifier":"p","limit":3,"duration":999}',
      '{"namespace":"hot","identifier":"p","limit":3}',
      '{"namespace":"hot","identifier":"p","limit":3,"duration":3600000,"extra":1}',
      '{"namespace":"h\\u006ft","identifier":"p","limit":3,"duration":3600000}',
      '{"namespace":"hot","identifier":"p\u00e9","limit":3,"duration":3600000}',
    ]) {
      expect(limitFromBody(new TextEncoder().encode(body), ctx()), body).toBeUndefined();
      expect(post(fast, 'ratelimits.limit', body)).toEqual(post(full, 'ratelimits.limit', body.replace('"p', '"q')));
    }
  });
});

describe('request ids', () => {
  it('replies answered from the body, the full way and errors draw distinct ids from one sequence per thread', () => {
    const [a] = twins();
    const requestId = (procedure: string, body: string): string => {
      const { reply } = fast.dispatch(fast.lookup(procedure), `Bearer ${ROOT}`, new TextEncoder().encode(body));
      return (JSON.parse(reply.body) as { meta: { requestId: string } }).meta.requestId;
    };
    const ids = [
      requestId('keys.verifyKey', JSON.stringify({ key: a.key })),
      requestId('ratelimits.limit', '{"namespace":"hot","identifier":"ids","limit":9,"duration":60000}'),
      requestId('keys.verifyKey', `{"key":${JSON.stringify(a.key)},"credits":{"cost":1.0}}`),
      requestId('keys.verifyKey', '{"key":'),
      requestId('keys.verifyKey', JSON.stringify({ key: a.key, permissions: 'a AND' })),
      newRequestId(),
      requestId('ratelimits.limit', '{"namespace":"hot","identifier":"ids","limit":9,"duration":60000}'),
    ];
    expect(ids.every((id) => /^req_[A-Za-z0-9]{16}$/.test(id)), ids.join(' ')).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    // One prefix, and counters that only go up.
    expect(new Set(ids.map((id) => id.slice(4, 12))).size).toBe(1);
    const counters = ids.map((id) => parseInt(id.slice(12), 36));
    expect(counters).toEqual([...counters].sort((x, y) => x - y));
  });
});
