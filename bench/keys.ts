// Management throughput and store size: wrk against keys.createKey and keys.getKey, and the
// bytes on disk per key for N keys (default 1,000,000) created with the real createKey code.
//   npm run bench:keys [-- --keys 1000000 --duration 10 --connections 64]
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { native } from '../src/engine/native.js';
import { createWorkspace } from '../src/store/rootKeys.js';
import { direct } from '../src/store/db.js';
import { insertApi } from '../src/store/apis.js';
import { benchCtx } from './lib/seed.js';
import { createKey } from '../src/procedures/keys/createKey.js';
import { loadLinesLua, runWrk } from './lib/wrk.js';
import { benchTempDir, startKeyward } from './lib/procs.js';
import { DEFAULT_MAP_BYTES } from '../src/config.js';
import { arg, HEADER, row } from './lib/report.js';

const sizeKeys = arg('keys', 1_000_000);
const durationS = arg('duration', 10);
const connections = arg('connections', 64);

// 1. Throughput over HTTP.
const keyward = await startKeyward();
const headers = { 'Content-Type': 'application/json', Authorization: `Bearer ${keyward.rootKey}` };
const base = `http://127.0.0.1:${keyward.port}`;
const post = async (p: string, body: unknown) => (await (await fetch(`${base}/v2/${p}`, { method: 'POST', headers, body: JSON.stringify(body) })).json()) as { data: Record<string, string> };
const apiId = (await post('apis.createApi', { name: 'bench' })).data.apiId as string;
const createBody = JSON.stringify({ apiId, name: 'bench key', credits: { remaining: 1000 }, ratelimits: [{ name: 'requests', limit: 100, duration: 60_000, autoApply: true }] });
let create, get;
try {
  create = runWrk({ url: `${base}/v2/keys.createKey`, body: createBody, headers, connections, threads: 1, durationS });
  const ids: string[] = [];
  for (let i = 0; i < 1000; i++) ids.push((await post('keys.createKey', { apiId })).data.keyId as string);
  const idFile = join(benchTempDir('keyward-bench-ids-'), 'ids.txt');
  writeFileSync(idFile, ids.join('\n') + '\n');
  get = runWrk({ url: `${base}/v2/keys.getKey`, body: '', initLua: loadLinesLua(idFile), bodyLua: `'{"keyId":"' .. items[math.random(#items)] .. '"}'`, headers, connections, threads: 1, durationS });
} finally {
  await keyward.stop();
}

// 2. Bytes per key: a fresh store, sizeKeys keys of the same shape as above.
const dir = benchTempDir('keyward-bench-size-');
native.open(dir, false, 0, DEFAULT_MAP_BYTES);
const ws = direct.transact(() => createWorkspace(Date.now()));
const api = direct.transact(() => insertApi(ws.id, 'size', Date.now()));
const ctx = benchCtx(api.id);
const base0 = native.stats().usedBytes;
const t0 = Date.now();
for (let i = 0; i < sizeKeys; i++) {
  await createKey({ apiId: api.id, byteLength: 16, enabled: true, recoverable: false, name: 'bench key', credits: { remaining: 1000 }, ratelimits: [{ name: 'requests', limit: 100, duration: 60_000, autoApply: true }] }, ctx);
  if ((i + 1) % 100_000 === 0) process.stderr.write(`  ${(i + 1).toLocaleString('en-US')} keys\r`);
}
const seconds = (Date.now() - t0) / 1000;
native.sync();
const used = native.stats().usedBytes - base0;
native.close();

process.stdout.write(
  [
    `keys management; wrk -t1 -c${connections} -d${durationS}s; keyward threads=1, durability=process`,
    HEADER,
    row('keys.createKey (credits + 1 limit)', create),
    row('keys.getKey (1,000 keys, random)', get),
    `store size: ${sizeKeys.toLocaleString('en-US')} keys (name, credits, 1 limit) use ${used.toLocaleString('en-US')} bytes → ${Math.round(used / sizeKeys)} bytes per key (created in-process in ${seconds.toFixed(1)} s, ${Math.round(sizeKeys / seconds).toLocaleString('en-US')} keys/s)`,
  ].join('\n') + '\n',
);
