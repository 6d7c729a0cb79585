// keys.verifyKey over HTTP: wrk against keyward with N distinct keys (credits + one
// autoApply limit each, picked at random per request), next to the bare uWS echo server
// answering the same requests, in one run.
//   npm run bench:verify [-- --keys 100000 --duration 10 --connections 64 --threads 1]
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { native } from '../src/engine/native.js';
import { loadLinesLua, runWrk } from './lib/wrk.js';
import { benchTempDir, startEcho, startKeyward } from './lib/procs.js';
import { LIMITED_KEY, openStore, seedKeys } from './lib/seed.js';
import { arg, HEADER, row } from './lib/report.js';

const keys = arg('keys', 100_000);
const durationS = arg('duration', 10);
const connections = arg('connections', 64);
const serverThreads = arg('threads', 1);

const keyward = await startKeyward({ KEYWARD_THREADS: String(serverThreads) });
const headers = { 'Content-Type': 'application/json', Authorization: `Bearer ${keyward.rootKey}` };
const base = `http://127.0.0.1:${keyward.port}`;
const created = await fetch(`${base}/v2/apis.createApi`, { method: 'POST', headers, body: JSON.stringify({ name: 'bench' }) });
const apiId = ((await created.json()) as { data: { apiId: string } }).data.apiId;

process.stderr.write(`seeding ${keys.toLocaleString('en-US')} keys…\n`);
openStore(keyward.dataDir);
const keyStrings = seedKeys(apiId, keys, LIMITED_KEY, (n) => process.stderr.write(`  ${n.toLocaleString('en-US')}\r`));
native.close();
const keyFile = join(benchTempDir('keyward-bench-keys-'), 'keys.txt');
writeFileSync(keyFile, keyStrings.join('\n') + '\n');

const sample = await (await fetch(`${base}/v2/keys.verifyKey`, { method: 'POST', headers, body: JSON.stringify({ key: keyStrings[0] }) })).text();
if (!sample.includes('"valid":true')) throw new Error(`seeded key does not verify: ${sample}`);

const run = (url: string) => runWrk({ url, body: '', initLua: loadLinesLua(keyFile), bodyLua: `'{"key":"' .. items[math.random(#items)] .. '"}'`, headers, connections, threads: 1, durationS });
let kw;
try {
  kw = run(`${base}/v2/keys.verifyKey`);
} finally {
  await keyward.stop();
}
const echo = await startEcho(Buffer.byteLength(sample));
let ceiling;
try {
  ceiling = run(`http://127.0.0.1:${echo.port}/v2/keys.verifyKey`);
} finally {
  await echo.stop();
}
process.stdout.write(
  [
    `keys.verifyKey: ${keys.toLocaleString('en-US')} keys with credits + 1 autoApply limit, random key per request; wrk -t1 -c${connections} -d${durationS}s; keyward threads=${serverThreads}, durability=process`,
    HEADER,
    row('keyward keys.verifyKey', kw),
    row(`bare uWS echo (${Buffer.byteLength(sample)}-byte reply)`, ceiling),
    `ratio keyward / uWS: ${(kw.requestsPerSec / ceiling.requestsPerSec).toFixed(3)}`,
  ].join('\n') + '\n',
);
if (kw.non2xx + kw.errors > 0) process.exitCode = 1;
