// Cluster mode (part 2) on this machine: credits and rate limits that hold across the nodes.
// A throwaway PostgreSQL and Redis, three keyward nodes sharing windows through Redis, and a
// single node to compare with.
//   npm run bench:cluster-counters [-- --keys 2000 --identifiers 10000 --duration 8 --rounds 3 --redis 1 --credits 1]
// 1. keys.verifyKey (each key with credits and an autoApply limit, both far from running out)
//    and ratelimits.limit (random identifiers of a large limit) on cluster node B against the
//    single node, alternating in the same rounds (wrk -t1 -c64): cluster ÷ single.
// 2. PostgreSQL transactions and Redis script calls per 1,000 hot calls over those cluster
//    rounds (pg_stat_database and Redis's INFO: everything, heartbeats and polls included).
// 3. Near the limit: ratelimits.limit on node B over a few identifiers of a small limit, so
//    grants shrink to one call and most admissions wait for Redis; and how long the calls
//    that waited for the cluster waited (node B's keyward_cluster_wait_seconds histogram).
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startPostgres } from './lib/postgres.js';
import { benchTempDir, startKeyward, startThrowawayRedis } from './lib/procs.js';
import { alternate, arg, type Measured } from './lib/report.js';
import { loadLinesLua, runWrk, type WrkResult } from './lib/wrk.js';
import { createKeys, metricsText, post } from './lib/http.js';

const keys = arg('keys', 2_000);
const identifiers = arg('identifiers', 10_000);
const durationS = arg('duration', 8);
const rounds = arg('rounds', 3);
/** 0: the nodes share no windows (no KEYWARD_REDIS_URL), to see what Redis costs apart from the leases. */
const withRedis = arg('redis', 1) !== 0;
/** 0: keys without credits, to see what the leases cost apart from the windows. */
const withCredits = arg('credits', 1) !== 0;

const say = (text: string): boolean => process.stderr.write(`${text}\n`);

/** Transactions PostgreSQL committed so far (all databases; its statistics lag up to a second). */
function pgCommits(port: number): number {
  const r = spawnSync('psql', ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', '-tAc', 'SELECT sum(xact_commit) FROM pg_stat_database'], { encoding: 'utf8' });
  return Number(r.stdout.trim());
}

/** Script calls Redis ran so far (keyward's every command to it is one; each runs a few inside). */
function redisCommands(port: number): number {
  const r = spawnSync('redis-cli', ['-p', String(port), 'INFO', 'commandstats'], { encoding: 'utf8' });
  return [...r.stdout.matchAll(/cmdstat_(?:evalsha|eval):calls=(\d+)/g)].reduce((sum, m) => sum + Number(m[1]), 0);
}

/** Calls that waited for the cluster on `base`, by need: how many, and the bucket bounds of their p50 and p99 (ms). */
async function waits(base: string): Promise<Record<string, { count: number; p50: string; p99: string }>> {
  const text = await metricsText(base);
  const out: Record<string, { count: number; p50: string; p99: string }> = {};
  for (const need of ['windows', 'credits']) {
    const buckets = [...text.matchAll(new RegExp(`keyward_cluster_wait_seconds_bucket\\{need="${need}",le="([^"]+)"\\} (\\d+)`, 'g'))].map((m) => [m[1] as string, Number(m[2])] as const);
    const count = buckets.at(-1)?.[1] ?? 0;
    const at = (q: number): string => {
      const le = buckets.find(([, n]) => n >= q * count)?.[0];
      return le === undefined ? '—' : le === '+Inf' ? '> 10 s' : `≤ ${Number(le) * 1000} ms`;
    };
    out[need] = { count, p50: at(0.5), p99: at(0.99) };
  }
  return out;
}

const pg = await startPostgres();
const redis = await startThrowawayRedis();
const lines: string[] = [];
try {
  const rootKey = `kwroot_bench_counters_${Date.now()}`;
  const env = (node: string): Record<string, string> => ({ KEYWARD_POSTGRES_URL: pg.url, ...(withRedis ? { KEYWARD_REDIS_URL: redis.url } : {}), KEYWARD_NODE_ID: node, KEYWARD_ROOT_KEY: rootKey });
  const nodes = await Promise.all(['a', 'b', 'c'].map((n) => startKeyward(env(n))));
  const [a, b] = nodes as [(typeof nodes)[number], (typeof nodes)[number]];
  const single = await startKeyward({ KEYWARD_ROOT_KEY: rootKey });
  say(`node B is pid ${b.child.pid}, the single node ${single.child.pid}`);
  // A node that dies under the bench says why.
  for (const k of [...nodes, single]) {
    let err = '';
    k.child.stderr?.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-4_000)));
    k.child.once('exit', (code, signal) => say(`a keyward node exited (${code ?? signal}): ${err}`));
  }
  const [baseA, baseB, baseSingle] = [a, b, single].map((k) => `http://127.0.0.1:${k.port}`) as [string, string, string];

  say(`creating ${keys.toLocaleString('en-US')} keys on the cluster and on the single node…`);
  const clusterApi = (await post(baseA, rootKey, 'apis.createApi', { name: 'bench' })).data.apiId as string;
  const singleApi = (await post(baseSingle, rootKey, 'apis.createApi', { name: 'bench' })).data.apiId as string;
  const clusterKeys = await createKeys(baseA, rootKey, clusterApi, keys, withCredits);
  const singleKeys = await createKeys(baseSingle, rootKey, singleApi, keys, withCredits);
  for (const key of clusterKeys.slice(-10)) while ((await post(baseB, rootKey, 'keys.verifyKey', { key })).data.valid !== true);
  for (const base of [baseA, baseSingle]) await post(base, rootKey, 'ratelimits.limit', { namespace: 'bench', identifier: 'first', limit: 1, duration: 1_000 });

  const dir = benchTempDir('keyward-bench-counters-');
  const file = (name: string, list: string[]): string => {
    const path = join(dir, name);
    writeFileSync(path, list.join('\n') + '\n');
    return path;
  };
  const ids = file('identifiers.txt', Array.from({ length: identifiers }, (_, i) => `user_${i}`));
  const headers = { 'Content-Type': 'application/json', Authorization: `Bearer ${rootKey}` };
  const verify = (base: string, list: string) => (seconds: number) => runWrk({ url: `${base}/v2/keys.verifyKey`, body: '', initLua: loadLinesLua(list), bodyLua: `'{"key":"' .. items[math.random(#items)] .. '"}'`, headers, connections: 64, threads: 1, durationS: seconds });
  const limit = (base: string, max: number, windowMs: number) => (seconds: number) => runWrk({ url: `${base}/v2/ratelimits.limit`, body: '', initLua: loadLinesLua(ids), bodyLua: `'{"namespace":"bench","identifier":"' .. items[math.random(#items)] .. '","limit":${max},"duration":${windowMs}}'`, headers, connections: 64, threads: 1, durationS: seconds });

  // What the cluster's runs cost PostgreSQL and Redis, per hot call.
  let requests = 0;
  let commits = 0;
  let commands = 0;
  const counted = (m: Measured): Measured => ({
    ...m,
    run: (seconds: number): WrkResult => {
      const [pg0, redis0] = [pgCommits(pg.port), redisCommands(redis.port)];
      const res = m.run(seconds);
      requests += res.requests;
      commits += pgCommits(pg.port) - pg0;
      commands += redisCommands(redis.port) - redis0;
      return res;
    },
  });
  const compared = alternate(rounds, durationS, [
    {
      measured: counted({ name: 'cluster node B, keys.verifyKey (credits + autoApply limit)', run: verify(baseB, file('cluster.txt', clusterKeys)), pid: b.child.pid }),
      ceiling: { name: 'single node, keys.verifyKey (credits + autoApply limit)', run: verify(baseSingle, file('single.txt', singleKeys)), pid: single.child.pid },
    },
    {
      measured: counted({ name: `cluster node B, ratelimits.limit (${identifiers.toLocaleString('en-US')} identifiers, 1,000,000,000 a minute)`, run: limit(baseB, 1_000_000_000, 60_000), pid: b.child.pid }),
      ceiling: { name: `single node, ratelimits.limit (${identifiers.toLocaleString('en-US')} identifiers, 1,000,000,000 a minute)`, run: limit(baseSingle, 1_000_000_000, 60_000), pid: single.child.pid },
    },
  ]);
  const perThousand = (n: number): string => ((n / requests) * 1000).toFixed(2);
  lines.push(
    `## Hot calls on a node of a 3-node cluster (PostgreSQL + Redis) and on a single node, wrk -t1 -c64 -d${durationS}s, ${rounds} rounds alternating`,
    ...compared.lines,
    '',
    `Over the cluster's runs (warm-ups included, ${requests.toLocaleString('en-US')} hot calls on node B): PostgreSQL ${perThousand(commits)} transactions and Redis ${perThousand(commands)} script calls per 1,000 hot calls (heartbeats, log polls and lease renewals of all three nodes included).`,
  );
  const steady = await waits(baseB);
  // Which of keyward's SQL functions those transactions were (PostgreSQL runs with track_functions).
  const fns = spawnSync('psql', ['-h', '127.0.0.1', '-p', String(pg.port), '-U', 'postgres', '-tAc', "SELECT string_agg(funcname || ' ' || calls, ', ' ORDER BY calls DESC) FROM pg_stat_user_functions"], { encoding: 'utf8' });
  lines.push(`keyward's SQL function calls so far (key creation included): ${fns.stdout.trim()}`);

  // 3. Near the limit: 100 identifiers of 100 a second.
  say('near the limit…');
  const near = file('near.txt', Array.from({ length: 100 }, (_, i) => `near_${i}`));
  const nearRun = runWrk({ url: `${baseB}/v2/ratelimits.limit`, body: '', initLua: loadLinesLua(near), bodyLua: `'{"namespace":"bench","identifier":"' .. items[math.random(#items)] .. '","limit":100,"duration":1000}'`, headers, connections: 64, threads: 1, durationS });
  const after = await waits(baseB);
  const waited = after.windows?.count ?? 0;
  const before = steady.windows?.count ?? 0;
  lines.push(
    '',
    `## Near the limit: ratelimits.limit on node B, 100 identifiers of 100 a second, wrk -t1 -c64 -d${durationS}s`,
    `${Math.round(nearRun.requestsPerSec).toLocaleString('en-US')} req/s, p50 ${nearRun.latencyP50Ms.toFixed(2)} ms, p99 ${nearRun.latencyP99Ms.toFixed(2)} ms, non-2xx ${nearRun.non2xx}; ${(waited - before).toLocaleString('en-US')} of ${nearRun.requests.toLocaleString('en-US')} calls waited for Redis`,
    '',
    '## Calls that waited for the cluster on node B, the whole run (keyward_cluster_wait_seconds)',
    '| need | calls | p50 | p99 |',
    '|---|---|---|---|',
    ...Object.entries(after).map(([need, w]) => `| ${need} | ${w.count.toLocaleString('en-US')} | ${w.p50} | ${w.p99} |`),
  );
  await Promise.all([...nodes, single].map((k) => k.stop()));
} finally {
  await redis.stop();
  pg.stop();
}
process.stdout.write(lines.join('\n') + '\n');
