// In-process engine throughput: native calls per second on one core (this thread), no HTTP.
//   npm run bench:native        (BENCH_SECONDS, BENCH_KEYS, BENCH_BATCH, BENCH_ONLY to change the run)
// Scenarios: verifyKey on one key and on BENCH_KEYS keys (random) with credits + one
// autoApply limit, the same for plain keys (read-only), ratelimits.limit over 1,000,000
// identifiers that all have a live window and on one hot identifier. The store is opened as
// the server opens it (default map size, background fsync every 100 ms on another thread);
// state-changing calls are measured as the server runs them (group commit: one LMDB commit
// per event-loop turn, here per BENCH_BATCH calls) and with one commit per call. The last
// rows go through the dispatcher as the server does for each request once uWS has its body:
// authentication, the hot call read from the body bytes, the reply with its envelope and
// request id; what a request costs the server beyond the HTTP layer.
import { native } from '../src/engine/native.js';
import { Effect, HotCalls, isNeed } from '../src/engine/hotCalls.js';
import { DEFAULT_MAP_BYTES, loadConfig } from '../src/config.js';
import { createWorkspace, insertRootKey } from '../src/store/rootKeys.js';
import { direct } from '../src/store/db.js';
import { Dispatcher } from '../src/rpc/dispatch.js';
import { createLogger } from '../src/log.js';
import { threadServices } from '../src/serve.js';
import { insertApi } from '../src/store/apis.js';
import { ensureNamespace } from '../src/store/ratelimits.js';
import { benchTempDir } from './lib/procs.js';
import { LIMITED_KEY, batched, prefillWindows, seedKeys, type Runner } from './lib/seed.js';

const KEYS = Number(process.env.BENCH_KEYS ?? 10_000);
/** Calls per group-commit batch, as the server commits the hot calls of one event-loop turn. */
const BATCH = Number(process.env.BENCH_BATCH ?? 64);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
/** BENCH_ONLY=<text>: run only the scenarios whose name contains it (for profiling one). */
const ONLY = process.env.BENCH_ONLY;
const SYNC_INTERVAL_MS = 100;
/** BENCH_WRITE_MAP=on: commits through the writable map instead of pwrite (the server's KEYWARD_WRITE_MAP). */
const WRITE_MAP = process.env.BENCH_WRITE_MAP === 'on';

/** Every BATCH calls share one commit, as the server commits the hot calls of one event-loop turn. */
const grouped = (call: (i: number) => void): Runner => batched(BATCH, call);
/** Each state-changing call commits before it returns. */
const alone = (call: (i: number) => void): Runner => ({ call, flush: () => undefined });

function measure(name: string, { call, flush }: Runner, before?: () => void): number {
  if (ONLY !== undefined && !name.includes(ONLY)) return 0;
  before?.();
  for (let i = 0; i < 20_000; i++) call(i); // warm-up
  flush();
  let calls = 0;
  const start = process.hrtime.bigint();
  const until = start + BigInt(SECONDS * 1e9);
  let now = start;
  while (now < until) {
    for (let j = 0; j < 1000; j++) call(calls++);
    now = process.hrtime.bigint();
  }
  flush();
  const perSec = calls / (Number(now - start) / 1e9);
  process.stdout.write(`| ${name} | ${Math.round(perSec).toLocaleString('en-US')} | ${(1e6 / perSec).toFixed(2)} |\n`);
  return perSec;
}

native.open(benchTempDir('keyward-bench-native-'), false, SYNC_INTERVAL_MS, DEFAULT_MAP_BYTES, WRITE_MAP);
const ws = direct.transact(() => createWorkspace(Date.now()));
const api = direct.transact(() => insertApi(ws.id, 'bench', Date.now()));
const limited = await seedKeys(api.id, KEYS, LIMITED_KEY);
const plain = await seedKeys(api.id, KEYS, {});
direct.transact(() => ensureNamespace(ws.id, 'bench', Date.now()));
const hot = new HotCalls();
const encoder = new TextEncoder();
/** Request bodies encoded beforehand, as uWS hands them over (a walk over `count` of them). */
const bodies = (count: number, body: (i: number) => string): ((i: number) => Uint8Array) => {
  const all = Array.from({ length: count }, (_, i) => encoder.encode(body(i)));
  return (i) => all[i % count] as Uint8Array;
};

const keys = KEYS.toLocaleString('en-US');
process.stdout.write(`native engine, one thread, ${SECONDS} s per scenario; store as the server opens it (background fsync every ${SYNC_INTERVAL_MS} ms${WRITE_MAP ? '; writable map on' : ''})\n`);
process.stdout.write('| scenario | calls/s | µs/call |\n|---|---|---|\n');
// Random keys: a multiplicative walk over the key set (no two calls in a row hit one key).
const anyOf = (set: string[]) => (i: number) => set[(i * 7919) % set.length] as string;
const one = (set: string[]) => () => set[0] as string;
const verify = (pick: (i: number) => string, count: number) => {
  const body = bodies(count, (i) => `{"key":"${pick(i)}"}`);
  return (i: number) => {
    const out = hot.verifyKey(body(i), ws.id, '*', Date.now(), false);
    if (out === undefined || isNeed(out) || !out.body.includes('"valid":true')) throw new Error(`unexpected verification: ${JSON.stringify(out)}`);
  };
};
const IDENTIFIERS = 1_000_000;
const identifier = (i: number) => `user_${i}`;
const limitBody = (id: (i: number) => string, limit: number) => bodies(1 << 18, (i) => `{"namespace":"bench","identifier":"${id(i)}","limit":${limit},"duration":60000}`);
const manyBodies = limitBody((i) => identifier((i * 7919) % IDENTIFIERS), 1_000_000);
const limitMany = (i: number) => {
  hot.limit(manyBodies(i), ws.id, '*', Date.now(), false);
};
// Every identifier has a live window before the 1,000,000-identifier scenarios (the steady
// state of that many callers), rather than a table that grows during the measurement.
let prefilled = false;
const prefill = () => {
  if (!prefilled) prefillWindows(ws.id, 'bench', IDENTIFIERS, identifier, 1_000_000, 60_000);
  prefilled = true;
};
const hotBody = limitBody(() => 'hot', 1_000_000_000);
const limitHot = (i: number) => {
  hot.limit(hotBody(i), ws.id, '*', Date.now(), false);
};
measure(`verifyKey, credits + 1 autoApply limit, one key, commit per ${BATCH} calls`, grouped(verify(one(limited), 1)));
measure(`verifyKey, credits + 1 autoApply limit, ${keys} keys, commit per ${BATCH} calls`, grouped(verify(anyOf(limited), KEYS)));
measure(`verifyKey, credits + 1 autoApply limit, ${keys} keys, commit per call`, alone(verify(anyOf(limited), KEYS)));
measure('verifyKey, plain key (read only), one key', alone(verify(one(plain), 1)));
measure(`verifyKey, plain key (read only), ${keys} keys`, alone(verify(anyOf(plain), KEYS)));
measure(`ratelimits.limit, 1,000,000 live identifiers, commit per ${BATCH} calls`, grouped(limitMany), prefill);
measure('ratelimits.limit, 1,000,000 live identifiers, commit per call', alone(limitMany), prefill);
measure(`ratelimits.limit, one hot identifier, commit per ${BATCH} calls`, grouped(limitHot));

// Through the dispatcher, with the server's group commit: the first hot call of a turn opens
// the batch and the end of the turn commits it (here every BENCH_BATCH calls). Bodies are
// encoded beforehand, as uWS hands them over: 262,144 of them, so the limit row walks that
// many of the 1,000,000 identifiers.
const ROOT_KEY = 'kwroot_bench_native_aaaaaaaaaaaaaaaaaaaaaa';
direct.transact(() => insertRootKey(ws.id, ROOT_KEY, ['*'], Date.now()));
// The server's services for this thread; the gate turns group commit on.
const { services } = threadServices(loadConfig({}), createLogger('silent'), false);
const dispatcher = new Dispatcher('http://127.0.0.1', services);
const NO_REPLY = { send: () => undefined, fail: (err: unknown) => { throw err; } };
const BODIES = 1 << 18;
const throughDispatcher = (procedure: string, body: (i: number) => string): Runner => {
  const route = dispatcher.lookup(procedure);
  const auth = `Bearer ${ROOT_KEY}`;
  const encoder = new TextEncoder();
  const bodies = Array.from({ length: BODIES }, (_, i) => encoder.encode(body(i)));
  // The dispatcher's first hot call opens the batch and the gate learns of it, as in a turn.
  return batched(
    BATCH,
    (i) => {
      const result = dispatcher.dispatch(route, auth, bodies[i % BODIES] as Uint8Array);
      if (result instanceof Promise) throw new Error('a hot call from the body answers at once');
      const { reply, effect } = result;
      if (reply.status !== 200) throw new Error(`unexpected reply: ${reply.body}`);
      // Only the reply that opened the batch is held (the gate must learn of the batch); the
      // server holds every reply of the turn, which this row leaves out as before.
      if (effect === Effect.OpenedBatch) services.gate.hold(effect, NO_REPLY);
    },
    { begin: () => undefined, commit: () => services.gate.closeBatch() },
  );
};
measure(
  `keys.verifyKey through the dispatcher, credits + 1 autoApply limit, ${keys} keys, commit per ${BATCH} calls`,
  throughDispatcher('keys.verifyKey', (i) => `{"key":"${anyOf(limited)(i)}"}`),
);
measure(
  `ratelimits.limit through the dispatcher, 1,000,000 live identifiers, commit per ${BATCH} calls`,
  throughDispatcher('ratelimits.limit', (i) => `{"namespace":"bench","identifier":"${identifier((i * 7919) % IDENTIFIERS)}","limit":1000000,"duration":60000}`),
  prefill,
);
native.close();
