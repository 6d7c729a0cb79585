// ratelimits.limit over HTTP: wrk with identifiers drawn from 1,000,000 (all with a live
// window before the measurement), and with one hot identifier, next to the bare uWS echo
// server, alternating for several rounds in one run; plus the bytes per live identifier on
// disk (the limiter log) and in the server's memory (its index of the log).
//   npm run bench:limit [-- --identifiers 1000000 --duration 10 --connections 64 --rounds 3]
import { native } from '../src/engine/native.js';
import { runWrk } from './lib/wrk.js';
import { startEcho, startKeyward } from './lib/procs.js';
import { alternate, arg } from './lib/report.js';
import { openStore, prefillWindows } from './lib/seed.js';
import { rssAnonBytes } from './lib/procStats.js';
import { listWorkspaces } from '../src/store/rootKeys.js';
import { findNamespace } from '../src/store/ratelimits.js';

const identifiers = arg('identifiers', 1_000_000);
const durationS = arg('duration', 10);
const connections = arg('connections', 64);
const rounds = arg('rounds', 3);

const keyward = await startKeyward();
const headers = { 'Content-Type': 'application/json', Authorization: `Bearer ${keyward.rootKey}` };
const base = `http://127.0.0.1:${keyward.port}`;
const manyBody = `'{"namespace":"bench","identifier":"user_' .. math.random(${identifiers}) .. '","limit":1000000,"duration":3600000}'`;
const hotBody = JSON.stringify({ namespace: 'bench', identifier: 'hot', limit: 1_000_000_000, duration: 3_600_000 });
const sample = await (await fetch(`${base}/v2/ratelimits.limit`, { method: 'POST', headers, body: hotBody })).text();
if (!sample.includes('"success":true')) throw new Error(`limit failed: ${sample}`);

const echo = await startEcho(Buffer.byteLength(sample));
openStore(keyward.dataDir);
const before = native.stats();
// Every identifier gets its window before the measurement (the steady state of that many
// live callers); wrk then draws them at random (user_1 … user_<identifiers>).
const namespace = listWorkspaces().map((w) => findNamespace(w.id, 'bench')).find((n) => n !== undefined);
if (namespace === undefined) throw new Error('the sample request did not create the namespace');
process.stderr.write(`giving ${identifiers.toLocaleString('en-US')} identifiers a live window…\n`);
const anonBefore = rssAnonBytes(keyward.child.pid);
prefillWindows(namespace.workspaceId, namespace.name, identifiers, (i) => `user_${i + 1}`, 1_000_000, 3_600_000);
// The server reads the windows this process appended to the log into its index (memory) at
// its next request.
await fetch(`${base}/v2/ratelimits.limit`, { method: 'POST', headers, body: hotBody });
const indexBytes = rssAnonBytes(keyward.child.pid) - anonBefore;
let report;
try {
  // Each keyward scenario is compared with the echo server under the same requests, built the
  // same way by wrk (a Lua body per request costs wrk more than a fixed body).
  const many = (url: string) => (seconds: number) => runWrk({ url, body: '', bodyLua: manyBody, initLua: 'math.randomseed(os.time())\n', headers, connections, threads: 1, durationS: seconds });
  const hot = (url: string) => (seconds: number) => runWrk({ url, body: hotBody, headers, connections, threads: 1, durationS: seconds });
  const echoUrl = `http://127.0.0.1:${echo.port}/v2/ratelimits.limit`;
  const echoName = `bare uWS echo (${Buffer.byteLength(sample)}-byte reply)`;
  report = alternate(rounds, durationS, [
    { measured: { name: `keyward, identifiers from ${identifiers.toLocaleString('en-US')}`, run: many(`${base}/v2/ratelimits.limit`), pid: keyward.child.pid }, ceiling: { name: `${echoName}, the same requests`, run: many(echoUrl) } },
    { measured: { name: 'keyward, one hot identifier', run: hot(`${base}/v2/ratelimits.limit`), pid: keyward.child.pid }, ceiling: { name: `${echoName}, the hot request`, run: hot(echoUrl) } },
  ]);
} finally {
  await keyward.stop();
  await echo.stop();
}
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
