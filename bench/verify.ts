// keys.verifyKey over HTTP: wrk against keyward with N distinct keys (credits + one
// autoApply limit each, picked at random per request), next to the bare uWS echo server
// answering the same requests, alternating between the two for several rounds in one run
// (this shared machine's speed drifts; the medians and the per-round ratios are reported).
//   npm run bench:verify [-- --keys 100000 --duration 10 --connections 64 --threads 1 --rounds 3]
//   --baseline <checkout>: also another build of keyward (an older commit's checkout, built),
//   seeded alike and alternated with the rest, for an A/B of two builds in one run.
//   --analytics 1: keyward with KEYWARD_ANALYTICS=on, and the same build with it off (the
//   default) alternated with the rest: what recording analytics events costs the hot path
//   (analytics on ÷ off per round).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { native } from '../src/engine/native.js';
import { loadLinesLua, runWrk } from './lib/wrk.js';
import { benchTempDir, startEcho, startKeyward } from './lib/procs.js';
import { LIMITED_KEY, openStore, seedKeys } from './lib/seed.js';
import { alternate, arg, textArg, type Pair } from './lib/report.js';
import { analyticsLine } from './lib/http.js';

const keys = arg('keys', 100_000);
const durationS = arg('duration', 10);
const connections = arg('connections', 64);
const serverThreads = arg('threads', 1);
const rounds = arg('rounds', 3);
const baseline = textArg('baseline');
const analyticsAB = arg('analytics', 0) !== 0;

/** A keyward (this build, or the baseline's) with its own store of `keys` seeded keys. */
async function seeded(checkout?: string, env: Record<string, string> = {}) {
  const keyward = await startKeyward({ KEYWARD_THREADS: String(serverThreads), ...env }, checkout);
  const headers = { 'Content-Type': 'application/json', Authorization: `Bearer ${keyward.rootKey}` };
  const base = `http://127.0.0.1:${keyward.port}`;
  const created = await fetch(`${base}/v2/apis.createApi`, { method: 'POST', headers, body: JSON.stringify({ name: 'bench' }) });
  const apiId = ((await created.json()) as { data: { apiId: string } }).data.apiId;
  process.stderr.write(`seeding ${keys.toLocaleString('en-US')} keys${checkout === undefined ? '' : ` for ${checkout}`}…\n`);
  openStore(keyward.dataDir);
  const keyStrings = await seedKeys(apiId, keys, LIMITED_KEY, (n) => process.stderr.write(`  ${n.toLocaleString('en-US')}\r`));
  native.close();
  const keyFile = join(benchTempDir('keyward-bench-keys-'), 'keys.txt');
  writeFileSync(keyFile, keyStrings.join('\n') + '\n');
  const sample = await (await fetch(`${base}/v2/keys.verifyKey`, { method: 'POST', headers, body: JSON.stringify({ key: keyStrings[0] }) })).text();
  if (!sample.includes('"valid":true')) throw new Error(`seeded key does not verify: ${sample}`);
  const run = (url: string) => (seconds: number) => runWrk({ url, body: '', initLua: loadLinesLua(keyFile), bodyLua: `'{"key":"' .. items[math.random(#items)] .. '"}'`, headers, connections, threads: 1, durationS: seconds });
  return { keyward, base, sample, run };
}

const current = await seeded(undefined, analyticsAB ? { KEYWARD_ANALYTICS: 'on' } : {});
const other = baseline === undefined ? undefined : await seeded(baseline);
const off = analyticsAB ? await seeded(undefined, { KEYWARD_ANALYTICS: 'off' }) : undefined;
const echo = await startEcho(Buffer.byteLength(current.sample));
let report;
try {
  const ceiling = { name: `bare uWS echo (${Buffer.byteLength(current.sample)}-byte reply)`, run: current.run(`http://127.0.0.1:${echo.port}/v2/keys.verifyKey`) };
  const pairs: Pair[] = [{ measured: { name: 'keyward keys.verifyKey', run: current.run(`${current.base}/v2/keys.verifyKey`), pid: current.keyward.child.pid }, ceiling }];
  if (other !== undefined) pairs.push({ measured: { name: `baseline keyward keys.verifyKey (${baseline})`, run: other.run(`${other.base}/v2/keys.verifyKey`), pid: other.keyward.child.pid }, ceiling });
  if (off !== undefined) pairs.push({ measured: pairs[0]?.measured as Pair['measured'], ceiling: { name: 'keyward keys.verifyKey, KEYWARD_ANALYTICS=off', run: off.run(`${off.base}/v2/keys.verifyKey`), pid: off.keyward.child.pid } });
  report = alternate(rounds, durationS, pairs);
  if (off !== undefined) report.lines.push(await analyticsLine('keyward (analytics on)', current.base));
} finally {
  await current.keyward.stop();
  await other?.keyward.stop();
  await off?.keyward.stop();
  await echo.stop();
}
process.stdout.write(
  [
    `keys.verifyKey: ${keys.toLocaleString('en-US')} keys with credits + 1 autoApply limit, random key per request; wrk -t1 -c${connections} -d${durationS}s, keyward and the echo server alternating, ${rounds} rounds; keyward threads=${serverThreads}, durability=process`,
    ...report.lines,
  ].join('\n') + '\n',
);
if (report.bad > 0) process.exitCode = 1;
