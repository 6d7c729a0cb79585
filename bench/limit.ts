// ratelimits.limit over HTTP: wrk with identifiers drawn from 1,000,000, and with one hot
// identifier, next to the bare uWS echo server in the same run; plus the store bytes per
// live identifier (window records).
//   npm run bench:limit [-- --identifiers 1000000 --duration 10 --connections 64]
import { native } from '../src/engine/native.js';
import { runWrk } from './lib/wrk.js';
import { startEcho, startKeyward } from './lib/procs.js';
import { arg, HEADER, row } from './lib/report.js';

const identifiers = arg('identifiers', 1_000_000);
const durationS = arg('duration', 10);
const connections = arg('connections', 64);

const keyward = await startKeyward();
const headers = { 'Content-Type': 'application/json', Authorization: `Bearer ${keyward.rootKey}` };
const base = `http://127.0.0.1:${keyward.port}`;
const manyBody = `'{"namespace":"bench","identifier":"user_' .. math.random(${identifiers}) .. '","limit":1000000,"duration":3600000}'`;
const hotBody = JSON.stringify({ namespace: 'bench', identifier: 'hot', limit: 1_000_000_000, duration: 3_600_000 });
const sample = await (await fetch(`${base}/v2/ratelimits.limit`, { method: 'POST', headers, body: hotBody })).text();
if (!sample.includes('"success":true')) throw new Error(`limit failed: ${sample}`);

native.open(keyward.dataDir, false, 0, 0);
const before = native.stats();
let many, hot;
try {
  many = runWrk({ url: `${base}/v2/ratelimits.limit`, body: '', bodyLua: manyBody, initLua: 'math.randomseed(os.time())\n', headers, connections, threads: 1, durationS });
  hot = runWrk({ url: `${base}/v2/ratelimits.limit`, body: hotBody, headers, connections, threads: 1, durationS });
} finally {
  await keyward.stop();
}
const after = native.stats();
native.close();
const windows = after.entries - before.entries;
const echo = await startEcho(Buffer.byteLength(sample));
let ceiling;
try {
  ceiling = runWrk({ url: `http://127.0.0.1:${echo.port}/v2/ratelimits.limit`, body: hotBody, headers, connections, threads: 1, durationS });
} finally {
  await echo.stop();
}
process.stdout.write(
  [
    `ratelimits.limit; wrk -t1 -c${connections} -d${durationS}s; keyward threads=1, durability=process`,
    HEADER,
    row(`keyward, identifiers from ${identifiers.toLocaleString('en-US')}`, many),
    row('keyward, one hot identifier', hot),
    row(`bare uWS echo (${Buffer.byteLength(sample)}-byte reply)`, ceiling),
    `ratio keyward / uWS: ${(many.requestsPerSec / ceiling.requestsPerSec).toFixed(3)} (many identifiers), ${(hot.requestsPerSec / ceiling.requestsPerSec).toFixed(3)} (hot identifier)`,
    `live identifiers stored: ${windows.toLocaleString('en-US')}; store grew ${(after.usedBytes - before.usedBytes).toLocaleString('en-US')} bytes → ${windows > 0 ? Math.round((after.usedBytes - before.usedBytes) / windows) : 0} bytes per live identifier`,
  ].join('\n') + '\n',
);
if (many.non2xx + many.errors + hot.non2xx + hot.errors > 0) process.exitCode = 1;
