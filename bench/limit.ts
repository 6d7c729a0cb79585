// ratelimits.limit over HTTP: wrk with identifiers drawn from 1,000,000 (all with a live
// window before the measurement), and with one hot identifier, next to the bare uWS echo
// server, alternating for several rounds in one run; plus the bytes per live identifier on
// disk (the limiter log) and in the server's memory (its index of the log).
//   npm run bench:limit [-- --identifiers 1000000 --duration 10 --connections 64 --rounds 3]
//   --baseline <checkout>: also another build of keyward (an older commit's checkout, built),
//   prefilled alike and alternated with the rest, for an A/B of two builds in one run.
//   --analytics 1: keyward with KEYWARD_ANALYTICS=on, and the same build with it off (the
//   default) alternated with the rest: what recording analytics events costs the hot path
//   (analytics on ÷ off per round).
import { native } from '../src/engine/native.js';
import { runWrk } from './lib/wrk.js';
import { startEcho, startKeyward } from './lib/procs.js';
import { alternate, arg, textArg, type Pair } from './lib/report.js';
import { analyticsLine } from './lib/http.js';
import { openStore, prefillWindows } from './lib/seed.js';
import { rssAnonBytes } from './lib/procStats.js';
import { listWorkspaces } from '../src/store/rootKeys.js';
import { findNamespace } from '../src/store/ratelimits.js';

const identifiers = arg('identifiers', 1_000_000);
const durationS = arg('duration', 10);
const connections = arg('connections', 64);
const rounds = arg('rounds', 3);

const baseline = textArg('baseline');
const analyticsAB = arg('analytics', 0) !== 0;
const manyBody = `'{"namespace":"bench","identifier":"user_' .. math.random(${identifiers}) .. '","limit":1000000,"duration":3600000}'`;
const hotBody = JSON.stringify({ namespace: 'bench', identifier: 'hot', limit: 1_000_000_000, duration: 3_600_000 });

/**
 * A keyward (this build, or the baseline's) whose `identifiers` identifiers all have a live
 * window (the steady state of that many live callers; wrk then draws them at random,
 * user_1 … user_<identifiers>), with what the windows cost it on disk and in memory.
 */
async function prefilled(checkout?: string, env: Record<string, string> = {}) {
  const keyward = await startKeyward(env, checkout);
  const headers = { 'Content-Type': 'application/json', Authorization: `Bearer ${keyward.rootKey}` };
  const base = `http://127.0.0.1:${keyward.port}`;
  const sample = await (await fetch(`${base}/v2/ratelimits.limit`, { method: 'POST', headers, body: hotBody })).text();
  if (!sample.includes('"success":true')) throw new Error(`limit failed: ${sample}`);
  openStore(keyward.dataDir);
  const before = native.stats();
  const namespace = listWorkspaces().map((w) => findNamespace(w.id, 'bench')).find((n) => n !== undefined);
  if (namespace === undefined) throw new Error('the sample request did not create the namespace');
  process.stderr.write(`giving ${identifiers.toLocaleString('en-US')} identifiers a live window${checkout === undefined ? '' : ` for ${checkout}`}…\n`);
  const anonBefore = rssAnonBytes(keyward.child.pid);
  prefillWindows(namespace.workspaceId, namespace.name, identifiers, (i) => `user_${i + 1}`, 1_000_000, 3_600_000);
  native.close();
  // The server reads the windows this process appended to the log into its index (memory) at
  // its next request.
  await fetch(`${base}/v2/ratelimits.limit`, { method: 'POST', headers, body: hotBody });
  const indexBytes = rssAnonBytes(keyward.child.pid) - anonBefore;
  return { keyward, headers, base, sample, before, indexBytes };
}

const current = await prefilled(undefined, analyticsAB ? { KEYWARD_ANALYTICS: 'on' } : {});
const other = baseline === undefined ? undefined : await prefilled(baseline);
const off = analyticsAB ? await prefilled(undefined, { KEYWARD_ANALYTICS: 'off' }) : undefined;
const { sample, headers, indexBytes, before } = current;
const echo = await startEcho(Buffer.byteLength(sample));
let report;
try {
  // Each keyward scenario is compared with the echo server under the same requests, built the
  // same way by wrk (a Lua body per request costs wrk more than a fixed body).
  const many = (url: string, h: Record<string, string>) => (seconds: number) => runWrk({ url, body: '', bodyLua: manyBody, initLua: 'math.randomseed(os.time())\n', headers: h, connections, threads: 1, durationS: seconds });
  const hot = (url: string, h: Record<string, string>) => (seconds: number) => runWrk({ url, body: hotBody, headers: h, connections, threads: 1, durationS: seconds });
  const echoUrl = `http://127.0.0.1:${echo.port}/v2/ratelimits.limit`;
  const echoName = `bare uWS echo (${Buffer.byteLength(sample)}-byte reply)`;
  const manyEcho = { name: `${echoName}, the same requests`, run: many(echoUrl, headers) };
  const hotEcho = { name: `${echoName}, the hot request`, run: hot(echoUrl, headers) };
  const servers = [{ who: 'keyward', k: current }, ...(other === undefined ? [] : [{ who: `baseline keyward (${baseline})`, k: other }])];
  const pairs: Pair[] = servers.flatMap(({ who, k }) => [
    { measured: { name: `${who}, identifiers from ${identifiers.toLocaleString('en-US')}`, run: many(`${k.base}/v2/ratelimits.limit`, k.headers), pid: k.keyward.child.pid }, ceiling: manyEcho },
    { measured: { name: `${who}, one hot identifier`, run: hot(`${k.base}/v2/ratelimits.limit`, k.headers), pid: k.keyward.child.pid }, ceiling: hotEcho },
  ]);
  if (off !== undefined) {
    const [manyOn, hotOn] = [pairs[0]?.measured, pairs[1]?.measured] as [Pair['measured'], Pair['measured']];
    pairs.push({ measured: manyOn, ceiling: { name: `keyward KEYWARD_ANALYTICS=off, identifiers from ${identifiers.toLocaleString('en-US')}`, run: many(`${off.base}/v2/ratelimits.limit`, off.headers), pid: off.keyward.child.pid } });
    pairs.push({ measured: hotOn, ceiling: { name: 'keyward KEYWARD_ANALYTICS=off, one hot identifier', run: hot(`${off.base}/v2/ratelimits.limit`, off.headers), pid: off.keyward.child.pid } });
  }
  report = alternate(rounds, durationS, pairs);
  if (off !== undefined) report.lines.push(await analyticsLine('keyward (analytics on)', current.base));
} finally {
  await current.keyward.stop();
  await other?.keyward.stop();
  await off?.keyward.stop();
  await echo.stop();
}
openStore(current.keyward.dataDir);
const after = native.stats();
native.close();
const windows = after.entries - before.entries;
process.stdout.write(
  [
    `ratelimits.limit; wrk -t1 -c${connections} -d${durationS}s, keyward and the echo server alternating, ${rounds} rounds; keyward threads=1, durability=process`,
    ...report.lines,
    `limiter log records after the run: ${windows.toLocaleString('en-US')} (${identifiers.toLocaleString('en-US')} live windows + superseded records not yet deleted); store grew ${(after.usedBytes - before.usedBytes).toLocaleString('en-US')} bytes → ${Math.round((after.usedBytes - before.usedBytes) / identifiers)} bytes per live identifier on disk`,
    `server memory (anonymous RSS) grew ${indexBytes.toLocaleString('en-US')} bytes when it read the ${identifiers.toLocaleString('en-US')} windows into its index → ${Math.round(indexBytes / identifiers)} bytes per live identifier in memory`,
  ].join('\n') + '\n',
);
if (report.bad > 0) process.exitCode = 1;
