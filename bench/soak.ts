// The soak (docs/operations.md, "Soak"): one keyward under a steady mixed load for a long
// time, watched for what a short bench does not show: memory, descriptors or store size
// that keep growing, latency that drifts, errors, and backups taken under that load that
// do not restore.
//
// Load, paced at --rate requests per second (open loop: a slow reply does not slow the
// sending; at most --in-flight requests wait at once, beyond that a send is counted as
// skipped): 80% keys.verifyKey of a random key with credits and an autoApply limit, 15%
// ratelimits.limit of an identifier never used before (every call a new window), 5%
// management writes (keys.createKey, keys.updateCredits, keys.updateKey, keys.deleteKey of
// a key the soak created, in turn). Every --sample seconds: the server's RSS, open
// descriptors, store bytes in use (/metrics), data file size, the interval's request rate,
// p50/p99 and errors. Every --backup-every minutes: `keyward backup` (its own process,
// while the load runs), then `keyward restore` of it into an empty dir and `keyward check`
// of the restored store, and every key whose createKey was acknowledged before the backup
// began (and not deleted) looked up in the restored store.
//   npm run bench:soak [-- --minutes 20 --rate 2000 --keys 10000 --backup-every 5 --sample 10]
import { execFile } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { native } from '../src/engine/native.js';
import { DATA_FILE } from '../src/store/integrity.js';
import { DEFAULT_MAP_BYTES } from '../src/config.js';
import { benchTempDir, MAIN_JS, startKeyward } from './lib/procs.js';
import { createKeys, post, readMetrics } from './lib/http.js';
import { arg, median } from './lib/report.js';
import { rssKiB } from './lib/procStats.js';

const minutes = arg('minutes', 20);
const rate = arg('rate', 2_000);
const keyCount = arg('keys', 10_000);
const backupEveryMin = arg('backup-every', 5);
const sampleS = arg('sample', 10);
const maxInFlight = arg('in-flight', 256);

const run = promisify(execFile);
const CLI = join(dirname(MAIN_JS), 'cli.js');
const MiB = 1024 * 1024;

const keyward = await startKeyward({ KEYWARD_LOG_LEVEL: 'warn' });
const pid = keyward.child.pid as number;
const base = `http://127.0.0.1:${keyward.port}`;
const apiId = (await post(base, keyward.rootKey, 'apis.createApi', { name: 'soak' })).data.apiId as string;
process.stderr.write(`soak: seeding ${keyCount.toLocaleString('en-US')} keys…\n`);
const keys = await createKeys(base, keyward.rootKey, apiId, keyCount);
const seededKeyIds = new Set<string>();

// ---- load ---------------------------------------------------------------------------
const agent = new Agent({ keepAlive: true, maxSockets: 64 });
const auth = `Bearer ${keyward.rootKey}`;

function send(procedure: string, body: unknown): Promise<{ status: number; text: string }> {
  const payload = JSON.stringify(body);
  return new Promise((resolve) => {
    const req = request(`${base}/v2/${procedure}`, { method: 'POST', agent, headers: { 'Content-Type': 'application/json', Authorization: auth, 'Content-Length': Buffer.byteLength(payload) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', () => resolve({ status: 0, text: '' }));
    });
    req.on('error', () => resolve({ status: 0, text: '' }));
    req.end(payload);
  });
}

interface Interval {
  latenciesMs: number[];
  errors: number;
  skipped: number;
  byStatus: Map<number, number>;
}
const freshInterval = (): Interval => ({ latenciesMs: [], errors: 0, skipped: 0, byStatus: new Map() });
let interval = freshInterval();
let inFlight = 0;
let sent = 0;
let identifiers = 0;
let writeTurn = 0;
/** Keys the soak created and has not deleted: id, and the time its createKey was acknowledged. */
const created: { keyId: string; ackedAt: number }[] = [];
/** Keys whose deleteKey was sent. */
const deleteSent = new Set<string>();

function pick<T>(xs: readonly T[]): T {
  return xs[Math.floor(Math.random() * xs.length)] as T;
}

async function one(): Promise<void> {
  const r = Math.random();
  const started = performance.now();
  let res: { status: number; text: string };
  if (r < 0.8) {
    res = await send('keys.verifyKey', { key: pick(keys) });
    if (res.status === 200 && !res.text.includes('"valid":true')) interval.errors++;
  } else if (r < 0.95) {
    res = await send('ratelimits.limit', { namespace: 'soak', identifier: `id-${identifiers++}`, limit: 10, duration: 60_000 });
  } else {
    const turn = writeTurn++ % 4;
    if (turn === 0 || created.length === 0) {
      res = await send('keys.createKey', { apiId, credits: { remaining: 1_000 }, meta: { soak: true } });
      if (res.status === 200) created.push({ keyId: (JSON.parse(res.text) as { data: { keyId: string } }).data.keyId, ackedAt: Date.now() });
    } else if (turn === 1) {
      res = await send('keys.updateCredits', { keyId: pick(created).keyId, operation: 'increment', value: 1 });
    } else if (turn === 2) {
      res = await send('keys.updateKey', { keyId: pick(created).keyId, meta: { soak: true, at: Date.now() } });
    } else {
      // Keeps the soak's own keys bounded: the oldest goes once there are more than 1,000.
      if (created.length > 1_000) {
        const victim = created.shift() as { keyId: string };
        deleteSent.add(victim.keyId);
        res = await send('keys.deleteKey', { keyId: victim.keyId });
      } else {
        res = await send('keys.updateCredits', { keyId: pick(created).keyId, operation: 'decrement', value: 1 });
      }
    }
  }
  interval.latenciesMs.push(performance.now() - started);
  interval.byStatus.set(res.status, (interval.byStatus.get(res.status) ?? 0) + 1);
  if (res.status !== 200) interval.errors++;
}

const TICK_MS = 5;
const startedAt = Date.now();
const endAt = startedAt + minutes * 60_000;
let owed = 0;
let lastTick = performance.now();
const pacer = setInterval(() => {
  const now = performance.now();
  owed += ((now - lastTick) * rate) / 1000;
  lastTick = now;
  for (; owed >= 1; owed--) {
    if (inFlight >= maxInFlight) {
      interval.skipped++;
      continue;
    }
    inFlight++;
    sent++;
    void one().finally(() => inFlight--);
  }
}, TICK_MS);

// ---- samples ------------------------------------------------------------------------
interface Sample {
  atS: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  skipped: number;
  rssMiB: number;
  fds: number;
  storeUsedMiB: number;
  fileMiB: number;
}
const samples: Sample[] = [];
const otherStatuses = new Map<number, number>();

async function metric(name: string): Promise<number> {
  return (await readMetrics(base))(name);
}

function quantile(sorted: number[], q: number): number {
  return sorted.length === 0 ? NaN : (sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number);
}

async function sample(): Promise<void> {
  const done = interval;
  interval = freshInterval();
  const lat = done.latenciesMs.sort((a, b) => a - b);
  for (const [status, n] of done.byStatus) if (status !== 200) otherStatuses.set(status, (otherStatuses.get(status) ?? 0) + n);
  const s: Sample = {
    atS: Math.round((Date.now() - startedAt) / 1000),
    rps: lat.length / sampleS,
    p50Ms: quantile(lat, 0.5),
    p99Ms: quantile(lat, 0.99),
    errors: done.errors,
    skipped: done.skipped,
    rssMiB: rssKiB(pid) / 1024,
    fds: readdirSync(`/proc/${pid}/fd`).length,
    storeUsedMiB: (await metric('keyward_store_used_bytes')) / MiB,
    fileMiB: statSync(join(keyward.dataDir, DATA_FILE)).size / MiB,
  };
  samples.push(s);
  process.stderr.write(`  ${s.atS}s ${s.rps.toFixed(0)} req/s p99 ${s.p99Ms.toFixed(1)} ms rss ${s.rssMiB.toFixed(0)} MiB fds ${s.fds} store ${s.storeUsedMiB.toFixed(1)} MiB errors ${s.errors} skipped ${s.skipped}\n`);
}

// ---- backups ------------------------------------------------------------------------
interface BackupResult {
  atS: number;
  backupS: number;
  restoreS: number;
  checkS: number;
  mib: number;
  checked: boolean;
  ackedKeys: number;
  missingKeys: number;
  problem?: string;
}
const backups: BackupResult[] = [];

async function backupAndRestore(n: number): Promise<void> {
  const dir = benchTempDir(`keyward-soak-backup-${n}-`);
  const target = join(dir, 'backup');
  const restored = join(dir, 'restored');
  const atS = Math.round((Date.now() - startedAt) / 1000);
  const beganAt = Date.now();
  // Keys acknowledged before the backup began whose delete was not sent before it ended
  // (one sent meanwhile may or may not be in the copy).
  const candidates = created.filter((c) => c.ackedAt < beganAt).map((c) => c.keyId);
  const result: BackupResult = { atS, backupS: NaN, restoreS: NaN, checkS: NaN, mib: NaN, checked: false, ackedKeys: 0, missingKeys: 0 };
  try {
    let t = performance.now();
    await run(process.execPath, [CLI, 'backup', target], { env: { ...process.env, KEYWARD_DATA_DIR: keyward.dataDir } });
    result.backupS = (performance.now() - t) / 1000;
    const acked = candidates.filter((keyId) => !deleteSent.has(keyId));
    result.ackedKeys = acked.length + seededKeyIds.size;
    result.mib = statSync(join(target, DATA_FILE)).size / MiB;
    t = performance.now();
    await run(process.execPath, [CLI, 'restore', target], { env: { ...process.env, KEYWARD_DATA_DIR: restored } });
    result.restoreS = (performance.now() - t) / 1000;
    t = performance.now();
    const check = JSON.parse((await run(process.execPath, [CLI, 'check'], { env: { ...process.env, KEYWARD_DATA_DIR: restored }, maxBuffer: 1 << 24 })).stdout) as { ok: boolean; problems: string[] };
    result.checkS = (performance.now() - t) / 1000;
    result.checked = check.ok;
    if (!check.ok) result.problem = check.problems.join('; ');
    // The restored store, opened here (the soak process has no other store open).
    native.open(restored, false, 0, DEFAULT_MAP_BYTES);
    try {
      for (const keyId of [...acked, ...seededKeyIds]) if (native.get('keys', keyId) === undefined) result.missingKeys++;
    } finally {
      native.close();
    }
  } catch (err) {
    result.problem = (err as Error).message.slice(0, 500);
  }
  backups.push(result);
  process.stderr.write(`  backup ${n} at ${atS}s: ${JSON.stringify(result)}\n`);
}

// The seeded keys' ids, for the restored stores' lookups.
for (let i = 0; i < keys.length; i += 500) {
  const batch = keys.slice(i, i + 500);
  await Promise.all(batch.map(async (key) => {
    const r = await send('keys.verifyKey', { key });
    seededKeyIds.add((JSON.parse(r.text) as { data: { keyId: string } }).data.keyId);
  }));
}

process.stderr.write(`soak: ${minutes} min at ${rate} req/s, a sample every ${sampleS} s, a backup every ${backupEveryMin} min\n`);
const sampler = setInterval(() => void sample(), sampleS * 1000);
const backupTimes = Array.from({ length: Math.floor(minutes / backupEveryMin) }, (_, i) => (i + 1) * backupEveryMin * 60_000);
const backupRuns: Promise<void>[] = [];
const backupTimers = backupTimes.map((ms, i) => setTimeout(() => backupRuns.push(backupAndRestore(i + 1)), Math.min(ms, minutes * 60_000 - 30_000)));
await new Promise((resolve) => setTimeout(resolve, endAt - Date.now()));
clearInterval(pacer);
clearInterval(sampler);
backupTimers.forEach(clearTimeout);
await Promise.all(backupRuns);
while (inFlight > 0) await new Promise((resolve) => setTimeout(resolve, 50));
agent.destroy();
await keyward.stop();

// ---- report -------------------------------------------------------------------------
const first = samples[0] as Sample;
const last = samples[samples.length - 1] as Sample;
const firstMinute = samples.filter((s) => s.atS <= 60);
const lastMinute = samples.filter((s) => s.atS > last.atS - 60);
const f1 = (x: number): string => x.toFixed(1);
const perMinute: string[] = [];
for (let m = 1; m <= minutes; m++) {
  const ss = samples.filter((s) => s.atS > (m - 1) * 60 && s.atS <= m * 60);
  if (ss.length === 0) continue;
  const end = ss[ss.length - 1] as Sample;
  perMinute.push(`| ${m} | ${median(ss.map((s) => s.rps)).toFixed(0)} | ${f1(median(ss.map((s) => s.p50Ms)))} | ${f1(Math.max(...ss.map((s) => s.p99Ms)))} | ${ss.reduce((a, s) => a + s.errors, 0)} | ${ss.reduce((a, s) => a + s.skipped, 0)} | ${f1(end.rssMiB)} | ${end.fds} | ${f1(end.storeUsedMiB)} | ${f1(end.fileMiB)} |`);
}
const totalErrors = samples.reduce((a, s) => a + s.errors, 0);
const totalSkipped = samples.reduce((a, s) => a + s.skipped, 0);
process.stdout.write(
  [
    `keyward soak: ${minutes} min, ${rate} req/s offered (80% verifyKey with credits + autoApply limit over ${keyCount.toLocaleString('en-US')} keys, 15% ratelimits.limit of a new identifier each, 5% management writes), ${sent.toLocaleString('en-US')} requests sent, ${identifiers.toLocaleString('en-US')} identifiers; a backup every ${backupEveryMin} min, each restored and checked`,
    '',
    `- RSS: ${f1(first.rssMiB)} MiB at ${first.atS} s, ${f1(last.rssMiB)} MiB at the end, at most ${f1(Math.max(...samples.map((s) => s.rssMiB)))} MiB`,
    `- descriptors: ${first.fds} → ${last.fds} (at most ${Math.max(...samples.map((s) => s.fds))})`,
    `- store in use: ${f1(first.storeUsedMiB)} MiB → ${f1(last.storeUsedMiB)} MiB (data file ${f1(last.fileMiB)} MiB)`,
    `- p99 per ${sampleS} s: median ${f1(median(samples.map((s) => s.p99Ms)))} ms, worst ${f1(Math.max(...samples.map((s) => s.p99Ms)))} ms; first minute median ${f1(median(firstMinute.map((s) => s.p99Ms)))} ms, last minute ${f1(median(lastMinute.map((s) => s.p99Ms)))} ms`,
    `- errors (non-200, socket errors, a seeded key not valid): ${totalErrors}${otherStatuses.size > 0 ? ` (${[...otherStatuses].map(([s, n]) => `${s === 0 ? 'socket' : s}: ${n}`).join(', ')})` : ''}; sends skipped at ${maxInFlight} in flight: ${totalSkipped}`,
    `- backups: ${backups.length}, restored and checked sound: ${backups.filter((b) => b.checked && b.missingKeys === 0 && b.problem === undefined).length}`,
    '',
    '| minute | req/s | p50 ms | worst p99 ms | errors | skipped | RSS MiB | descriptors | store in use MiB | data file MiB |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...perMinute,
    '',
    '| backup at | backup s | MiB | restore s | check s | sound | acknowledged keys | missing |',
    '|---|---|---|---|---|---|---|---|',
    ...backups.map((b) => `| ${b.atS} s | ${b.backupS.toFixed(2)} | ${f1(b.mib)} | ${b.restoreS.toFixed(2)} | ${b.checkS.toFixed(2)} | ${b.checked && b.problem === undefined ? 'yes' : `no: ${b.problem ?? ''}`} | ${b.ackedKeys.toLocaleString('en-US')} | ${b.missingKeys} |`),
  ].join('\n') + '\n',
);
if (totalErrors > 0 || backups.some((b) => !b.checked || b.missingKeys > 0 || b.problem !== undefined)) process.exitCode = 1;
