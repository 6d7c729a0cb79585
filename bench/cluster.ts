// Cluster mode (part 1) on this machine: a throwaway PostgreSQL and three keyward nodes.
//   npm run bench:cluster [-- --keys 10000 --duration 8 --rounds 3 --writes 100 --rate 20000 --catchup-keys 1000000]
// 1. keys.verifyKey on a cluster node against a single node, the same keys, alternating in
//    the same rounds (wrk -t1 -c64): the ratio is cluster ÷ single.
// 2. Propagation: the time from a write's reply on node A (keys.createKey) to the key
//    verifying on node B, `--writes` times, with no load and then under `--rate`
//    verifications per second spread over nodes B and C (the open-loop generator).
// 3. Catch-up: a single node's store of `--catchup-keys` keys loaded into an empty cluster
//    (keyward cluster seed), then the time an empty node takes from its start to listening.
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { native } from '../src/engine/native.js';
import { direct } from '../src/store/db.js';
import { insertApi } from '../src/store/apis.js';
import { createWorkspace } from '../src/store/rootKeys.js';
import { startPostgres } from './lib/postgres.js';
import { benchTempDir, MAIN_JS, startKeyward } from './lib/procs.js';
import { alternate, arg } from './lib/report.js';
import { openStore, seedKeys } from './lib/seed.js';
import { loadLinesLua, runWrk } from './lib/wrk.js';
import { rawPost, runOpenLoop } from './lib/openLoop.js';
import { createKeys, post } from './lib/http.js';

const keys = arg('keys', 10_000);
const durationS = arg('duration', 8);
const rounds = arg('rounds', 3);
const writes = arg('writes', 100);
const rate = arg('rate', 20_000);
const catchupKeys = arg('catchup-keys', 1_000_000);

const say = (text: string): boolean => process.stderr.write(`${text}\n`);
const percentile = (values: number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
};

/** Propagation samples (ms): createKey's reply on `writer` → the key valid on `reader`. */
async function propagation(writer: string, reader: string, rootKey: string, apiId: string, count: number): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < count; i++) {
    const created = await post(writer, rootKey, 'keys.createKey', { apiId });
    const replied = performance.now();
    for (;;) {
      const v = await post(reader, rootKey, 'keys.verifyKey', { key: created.data.key });
      if (v.data.valid === true) break;
    }
    samples.push(performance.now() - replied);
  }
  return samples;
}

const pg = await startPostgres();
const lines: string[] = [];
try {
  const rootKey = `kwroot_bench_cluster_${Date.now()}`;
  const env = (node: string): Record<string, string> => ({ KEYWARD_POSTGRES_URL: pg.url, KEYWARD_NODE_ID: node, KEYWARD_ROOT_KEY: rootKey });
  const [a, b, c] = (await Promise.all(['a', 'b', 'c'].map((n) => startKeyward(env(n))))) as [Awaited<ReturnType<typeof startKeyward>>, Awaited<ReturnType<typeof startKeyward>>, Awaited<ReturnType<typeof startKeyward>>];
  const single = await startKeyward({ KEYWARD_ROOT_KEY: rootKey });
  const [baseA, baseB, baseSingle] = [a, b, single].map((k) => `http://127.0.0.1:${k.port}`) as [string, string, string];

  // 1. verifyKey, a cluster node against a single node.
  say(`creating ${keys.toLocaleString('en-US')} keys on the cluster and on the single node…`);
  const clusterApi = (await post(baseA, rootKey, 'apis.createApi', { name: 'bench' })).data.apiId as string;
  const singleApi = (await post(baseSingle, rootKey, 'apis.createApi', { name: 'bench' })).data.apiId as string;
  const t0 = performance.now();
  const clusterKeys = await createKeys(baseA, rootKey, clusterApi, keys);
  const createRate = keys / ((performance.now() - t0) / 1000);
  const singleKeys = await createKeys(baseSingle, rootKey, singleApi, keys);
  const keyFile = (list: string[], name: string): string => {
    const file = join(benchTempDir('keyward-bench-cluster-'), name);
    writeFileSync(file, list.join('\n') + '\n');
    return file;
  };
  const headers = { 'Content-Type': 'application/json', Authorization: `Bearer ${rootKey}` };
  const verifyRun = (base: string, file: string) => (seconds: number) => runWrk({ url: `${base}/v2/keys.verifyKey`, body: '', initLua: loadLinesLua(file), bodyLua: `'{"key":"' .. items[math.random(#items)] .. '"}'`, headers, connections: 64, threads: 1, durationS: seconds });
  // Every cluster key has reached node B before it is measured.
  for (const key of clusterKeys.slice(-10)) while ((await post(baseB, rootKey, 'keys.verifyKey', { key })).data.valid !== true);
  const compared = alternate(rounds, durationS, [
    {
      measured: { name: 'cluster node B, keys.verifyKey', run: verifyRun(baseB, keyFile(clusterKeys, 'cluster.txt')), pid: b.child.pid },
      ceiling: { name: 'single node, keys.verifyKey', run: verifyRun(baseSingle, keyFile(singleKeys, 'single.txt')), pid: single.child.pid },
    },
  ]);
  lines.push(`## keys.verifyKey: a node of a 3-node cluster and a single node, ${keys.toLocaleString('en-US')} keys each (credits + 1 autoApply limit), wrk -t1 -c64 -d${durationS}s, ${rounds} rounds alternating`, ...compared.lines);
  lines.push(`keys.createKey over HTTP on cluster node A (16 at a time): ${Math.round(createRate).toLocaleString('en-US')}/s`);
  await single.stop();

  // 2. Propagation, no load and under load.
  say('propagation, no load…');
  const quiet = await propagation(baseA, baseB, rootKey, clusterApi, writes);
  say(`propagation under ${rate.toLocaleString('en-US')} verifications/s on nodes B and C…`);
  const load = [b, c].map((k, i) =>
    runOpenLoop({ port: k.port, rate: rate / 2, durationS: Math.max(10, writes / 10), connections: 32, warmupS: 1, next: (() => { let n = i; return () => rawPost('/v2/keys.verifyKey', `{"key":"${clusterKeys[n++ % clusterKeys.length] as string}"}`, `Bearer ${rootKey}`); })() }),
  );
  await new Promise((r) => setTimeout(r, 1_500));
  const loaded = await propagation(baseA, baseB, rootKey, clusterApi, writes);
  const [loadB, loadC] = await Promise.all(load);
  const row = (what: string, s: number[]): string => `| ${what} | ${s.length} | ${percentile(s, 50).toFixed(2)} | ${percentile(s, 99).toFixed(2)} | ${Math.max(...s).toFixed(2)} |`;
  lines.push(
    '',
    '## Propagation: createKey answered on node A → the key verifies on node B (ms)',
    '| load | writes | p50 | p99 | max |',
    '|---|---|---|---|---|',
    row('none', quiet),
    row(`${rate.toLocaleString('en-US')} verifications/s offered to B and C (B sent ${Math.round(loadB?.sentRps ?? 0).toLocaleString('en-US')}/s, p99 ${loadB?.p99Ms.toFixed(2)} ms; C ${Math.round(loadC?.sentRps ?? 0).toLocaleString('en-US')}/s, p99 ${loadC?.p99Ms.toFixed(2)} ms; non-2xx ${(loadB?.non2xx ?? 0) + (loadC?.non2xx ?? 0)})`, loaded),
  );
  await Promise.all([a, b, c].map((k) => k.stop()));

  // 3. Catch-up of an empty node from a cluster of `catchupKeys` keys.
  say(`seeding a single node's store with ${catchupKeys.toLocaleString('en-US')} keys…`);
  const store = benchTempDir('keyward-bench-catchup-');
  openStore(store);
  const ws = direct.transact(() => createWorkspace(Date.now()));
  const api = direct.transact(() => insertApi(ws.id, 'catchup', Date.now()));
  await seedKeys(api.id, catchupKeys, {}, (n) => process.stderr.write(`  ${n.toLocaleString('en-US')}\r`));
  native.close();
  spawnSync('psql', ['-h', '127.0.0.1', '-p', String(pg.port), '-U', 'postgres', '-c', 'CREATE DATABASE catchup'], { stdio: 'ignore' });
  const catchupUrl = pg.url.replace(/\/postgres$/, '/catchup');
  say('keyward cluster seed…');
  const seedStart = performance.now();
  const seeded = spawnSync(process.execPath, [join(MAIN_JS, '..', 'cli.js'), 'cluster', 'seed'], { env: { ...process.env, KEYWARD_DATA_DIR: store, KEYWARD_POSTGRES_URL: catchupUrl }, encoding: 'utf8' });
  if (seeded.status !== 0) throw new Error(`cluster seed failed: ${seeded.stderr}`);
  const seedS = (performance.now() - seedStart) / 1000;
  say('an empty node catching up…');
  const catchupStart = performance.now();
  const fresh = await startKeyward({ KEYWARD_POSTGRES_URL: catchupUrl, KEYWARD_NODE_ID: 'fresh' });
  const catchupS = (performance.now() - catchupStart) / 1000;
  await fresh.stop();
  lines.push(
    '',
    `## Catch-up: ${catchupKeys.toLocaleString('en-US')} keys`,
    `cluster seed of a single node's store: ${JSON.parse(seeded.stdout).records.toLocaleString('en-US')} records in ${seedS.toFixed(1)} s`,
    `an empty node, from its start to listening (snapshot loaded): ${catchupS.toFixed(1)} s`,
  );
} finally {
  pg.stop();
}
process.stdout.write(lines.join('\n') + '\n');
