// The capacity-planning suite (issue #6): `npm run bench [-- --full] [-- --out DIR]`, also
// `keyward bench [--full] [--out DIR]`. Runs every scenario against keyward (durability
// `process` and `disk`), the bare uWS ceiling, node:http + Redis (Lua) and
// rate-limiter-flexible on Redis, on one machine, and writes bench/results/<date>/
// report.md, raw.json and SVG plots. Fails (exit 1) when a system cannot be started.
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { cpus, totalmem, release } from 'node:os';
import { mkdirSync, readdirSync, readFileSync, existsSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import { Redis } from 'ioredis';
import { native } from '../src/engine/native.js';
import { runWrkAsync, type WrkResult } from './lib/wrk.js';
import { runOpenLoop, rawPost, TICK_US, TICKED_FROM_RPS, type LatencySummary } from './lib/openLoop.js';
import { holdCpusAwake } from './lib/cpuWake.js';
import { pauseDamon, runningKdamonds, type DamonPause } from './lib/damon.js';
import { ProcSampler, cpuTicks, type ProcUsage } from './lib/procStats.js';
import { benchTempDir, killAll, startCeiling, startKeyward, startRedis, startRedisPeer, type Proc } from './lib/procs.js';
import { LIMITED_KEY, openStore, seedKeys } from './lib/seed.js';
import { median, targetFigure, unknownSuiteArgument } from './lib/report.js';
import { keyHashKey } from './peers/redisKeys.js';
import { barChart, lineChart, type Line } from './lib/svg.js';

// ---------------------------------------------------------------- configuration
const argv = process.argv.slice(2);
const full = argv.includes('--full');
const outIdx = argv.indexOf('--out');
// Anything else is a mistake to stop on, not a 2-16 minute run with options ignored.
const unknown = unknownSuiteArgument(argv);
if (unknown !== undefined) {
  process.stderr.write(`keyward bench: unexpected argument '${unknown}'\nusage: npm run bench [-- --full] [-- --out DIR]   (or keyward bench [--full] [--out DIR])\n`);
  process.exit(2);
}
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const stamp = new Date().toISOString().replace(/:/g, '-').replace(/\.\d+Z$/, 'Z');
const outDir = resolve(outIdx >= 0 ? argv[outIdx + 1] ?? '.' : join(ROOT, 'bench', 'results', stamp));
const CFG = full
  ? { keys: 100_000, identifiers: 1_000_000, rounds: 3, peakS: 5, stepS: 5, warmupS: 1, autocannonS: 5, connections: 64 }
  : { keys: 20_000, identifiers: 100_000, rounds: 2, peakS: 1, stepS: 0.75, warmupS: 0.25, autocannonS: 1, connections: 64 };
const LOADS = [0.1, 0.5, 0.9];

/**
 * The benches of moving in and analytics, run at the end as they run alone (`npm run bench:…`),
 * their reports put into report.md as they print them (`script`: dist/bench/<script>.js, `npm run bench:<script>`): what a team moving keys in, and a
 * node keeping every event, can plan on. The short run takes a tenth of the full sizes.
 */
const EXTRAS: readonly { title: string; script: string; args: string[]; estimateS: number }[] = [
  { title: 'Moving in: keys.migrateKeys over HTTP while verifications run', script: 'migrate', args: ['--keys', full ? '1000000' : '100000'], estimateS: full ? 120 : 25 },
  { title: 'Export and import of a store', script: 'transfer', args: ['--keys', full ? '1000000' : '100000'], estimateS: full ? 300 : 40 },
  { title: 'Analytics: ingestion, bytes per event, documented queries', script: 'analytics', args: ['--events', full ? '10000000' : '1000000'], estimateS: full ? 600 : 60 },
];
/** The rate at which the ceiling's p99 is measured with and without DAMON paused: about half of keyward's verify peak here. */
const DAMON_PROBE_RPS = 35_000;
const COMMAND = `npm run bench${argv.length > 0 ? ` -- ${argv.join(' ')}` : ''}`;

type SystemId = 'keyward-process' | 'keyward-disk' | 'uws-ceiling' | 'redis-lua' | 'redis-rlflex';
const SYSTEM_NAMES: Record<SystemId, string> = {
  'keyward-process': 'keyward (process)',
  'keyward-disk': 'keyward (disk)',
  'uws-ceiling': 'bare uWS ceiling',
  'redis-lua': 'node:http + Redis Lua',
  'redis-rlflex': 'rate-limiter-flexible (Redis)',
};
const SYSTEM_ORDER: SystemId[] = ['keyward-process', 'keyward-disk', 'uws-ceiling', 'redis-lua', 'redis-rlflex'];

// ---------------------------------------------------------------- scenarios
interface Kind {
  path: string;
  /** Lua expression for the body (tables lk/pk hold the key strings). */
  lua: string;
  js: () => string;
}
interface Scenario {
  id: string;
  title: string;
  systems: SystemId[];
  mix: { kind: Kind; weight: number }[];
}

let limitedKeys: string[] = [];
let plainKeys: string[] = [];
let apiId = '';
const pick = (a: string[]): string => a[Math.floor(Math.random() * a.length)] ?? '';
const luaQuote = (s: string): string => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
const HOT_BODY = JSON.stringify({ namespace: 'bench', identifier: 'hot', limit: 1_000_000_000, duration: 3_600_000 });
const createBody = (): string => JSON.stringify({ apiId, name: 'bench key', credits: { remaining: 1000 }, ratelimits: [{ name: 'requests', limit: 100, duration: 60_000, autoApply: true }] });

const KINDS = {
  verifyLimited: { path: '/v2/keys.verifyKey', lua: `'{"key":"' .. lk[math.random(#lk)] .. '"}'`, js: () => `{"key":"${pick(limitedKeys)}"}` },
  verifyPlain: { path: '/v2/keys.verifyKey', lua: `'{"key":"' .. pk[math.random(#pk)] .. '"}'`, js: () => `{"key":"${pick(plainKeys)}"}` },
  limitMany: {
    path: '/v2/ratelimits.limit',
    lua: `'{"namespace":"bench","identifier":"user_' .. math.random(${CFG.identifiers}) .. '","limit":1000000,"duration":3600000}'`,
    js: () => `{"namespace":"bench","identifier":"user_${1 + Math.floor(Math.random() * CFG.identifiers)}","limit":1000000,"duration":3600000}`,
  },
  limitHot: { path: '/v2/ratelimits.limit', lua: luaQuote(HOT_BODY), js: () => HOT_BODY },
  createKey: { path: '/v2/keys.createKey', lua: 'createBody', js: createBody },
} satisfies Record<string, Kind>;

const ALL: SystemId[] = ['keyward-process', 'keyward-disk', 'uws-ceiling', 'redis-lua'];
const SCENARIOS: Scenario[] = [
  { id: 'verify-credits', title: `keys.verifyKey, ${CFG.keys.toLocaleString('en-US')} keys with credits + 1 autoApply limit, random key`, systems: ALL, mix: [{ kind: KINDS.verifyLimited, weight: 1 }] },
  { id: 'verify-plain', title: `keys.verifyKey, ${CFG.keys.toLocaleString('en-US')} plain keys, random key`, systems: ALL, mix: [{ kind: KINDS.verifyPlain, weight: 1 }] },
  { id: 'limit-many', title: `ratelimits.limit, identifiers drawn from ${CFG.identifiers.toLocaleString('en-US')}`, systems: [...ALL, 'redis-rlflex'], mix: [{ kind: KINDS.limitMany, weight: 1 }] },
  { id: 'limit-hot', title: 'ratelimits.limit, one hot identifier', systems: [...ALL, 'redis-rlflex'], mix: [{ kind: KINDS.limitHot, weight: 1 }] },
  { id: 'mixed', title: 'mixed: 90% verifyKey (credits + limit), 9% limit (many identifiers), 1% createKey', systems: ALL, mix: [{ kind: KINDS.verifyLimited, weight: 0.9 }, { kind: KINDS.limitMany, weight: 0.09 }, { kind: KINDS.createKey, weight: 0.01 }] },
  { id: 'create-key', title: 'keys.createKey (credits + 1 limit)', systems: ALL, mix: [{ kind: KINDS.createKey, weight: 1 }] },
];

function pickKind(s: Scenario): Kind {
  let r = Math.random();
  for (const m of s.mix) {
    if (r < m.weight) return m.kind;
    r -= m.weight;
  }
  return (s.mix[s.mix.length - 1] ?? s.mix[0])!.kind;
}

function requestLua(s: Scenario, prefix: string): string {
  const call = (k: Kind): string => `return wrk.format(nil, ${luaQuote(prefix + k.path)}, nil, ${k.lua})`;
  if (s.mix.length === 1) return `  ${call(s.mix[0]!.kind)}`;
  let acc = 0;
  const branches = s.mix.map((m, i) => {
    acc += m.weight;
    return i === s.mix.length - 1 ? `  else ${call(m.kind)}` : `  ${i === 0 ? 'if' : 'elseif'} r < ${acc.toFixed(4)} then ${call(m.kind)}`;
  });
  return `  local r = math.random()\n${branches.join('\n')}\n  end`;
}

// ---------------------------------------------------------------- progress display
const t0 = performance.now();
const totalSteps = SCENARIOS.reduce((a, s) => a + s.systems.length * (CFG.rounds + LOADS.length), 0) + 4 + SCENARIOS.length + EXTRAS.length;
const estimateS = EXTRAS.reduce((a, x) => a + x.estimateS, 0) + 15 + 4 * (CFG.warmupS + CFG.stepS) + totalSteps * 0.25 + SCENARIOS.reduce((a, s) => a + s.systems.length * (CFG.rounds * CFG.peakS + LOADS.length * (CFG.warmupS + CFG.stepS)), 0) + SCENARIOS.length * CFG.autocannonS;
let step = 0;
let phase = '';
let live = '';
const tty = process.stderr.isTTY === true;
const elapsed = (): number => (performance.now() - t0) / 1000;
function draw(): void {
  if (!tty) return;
  const line = `[${step}/${totalSteps}] ${elapsed().toFixed(0)}s of ~${estimateS.toFixed(0)}s · ${phase}${live === '' ? '' : ` · ${live}`}`;
  process.stderr.write(`\r\x1b[K${line.slice(0, (process.stderr.columns ?? 120) - 1)}`);
}
function progress(label: string): void {
  step++;
  phase = label;
  live = '';
  if (tty) draw();
  else process.stderr.write(`[${step}/${totalSteps}] ${elapsed().toFixed(0)}s ${label}\n`);
}
function note(msg: string): void {
  process.stderr.write(`${tty ? '\r\x1b[K' : ''}${msg}\n`);
}
const drawTimer = setInterval(draw, 500);

// ---------------------------------------------------------------- measuring
interface Target {
  system: SystemId;
  port: number;
  prefix: string;
  pids: number[];
}
interface PeakResult extends WrkResult {
  server: ProcUsage;
  wrkCores: number;
}
interface LatencyStep extends LatencySummary {
  loadFraction: number;
  server: ProcUsage;
}
interface AutocannonRun {
  system: SystemId;
  requestsPerSec: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  non2xx: number;
  errors: number;
  /** autocannon's own histogram summaries (requests/s per second, latency ms). */
  requests: autocannon.Histogram;
  latency: autocannon.Histogram;
}
interface Cell {
  scenario: string;
  system: SystemId;
  /** The median round of `rounds` (by req/s; the slower of two). */
  peak: PeakResult;
  /** Every peak round, in run order. */
  rounds: PeakResult[];
  latency: LatencyStep[];
}

const cells: Cell[] = [];
const autocannonRuns: Record<string, AutocannonRun> = {};
const auth = { value: '' };
let calibration = { openLoopMaxRps: 0, openLoopOffered: 0, openLoopCores: 0, autocannonCeilingRps: 0, wrkCeilingCores: 0, floorRps: 0, floorP99HeldMs: Number.NaN, floorP99FreeMs: Number.NaN, damonRps: 0, damonP99PausedMs: Number.NaN, damonP99RunningMs: Number.NaN };
/** Whether the open-loop runs held the CPUs out of their sleep states (lib/cpuWake.ts). */
const wake = { held: false, reason: '' };
/** The suite's pause of the machine's DAMON monitors (lib/damon.ts); none until the calibration takes it. */
let damon: DamonPause = { paused: false, reason: 'not paused yet', release: () => undefined };

async function measurePeak(s: Scenario, t: Target): Promise<PeakResult> {
  const sampler = new ProcSampler(t.pids);
  let wrkPid = 0;
  let wrkTicks = 0;
  const wrkTimer = setInterval(() => {
    if (wrkPid !== 0) wrkTicks = Math.max(wrkTicks, cpuTicks(wrkPid));
  }, 100);
  const started = performance.now();
  const r = await runWrkAsync(
    {
      url: `http://127.0.0.1:${t.port}${t.prefix}${s.mix[0]!.kind.path}`,
      body: '',
      headers: { 'Content-Type': 'application/json', Authorization: auth.value },
      initLua: `lk = {}\nfor line in io.lines(${luaQuote(keyFiles.limited)}) do lk[#lk + 1] = line end\npk = {}\nfor line in io.lines(${luaQuote(keyFiles.plain)}) do pk[#pk + 1] = line end\ncreateBody = ${luaQuote(createBody())}\nmath.randomseed(os.time())\n`,
      requestLua: requestLua(s, t.prefix),
      connections: CFG.connections,
      threads: 1,
      durationS: CFG.peakS,
    },
    (pid) => (wrkPid = pid),
  );
  clearInterval(wrkTimer);
  const server = sampler.stop();
  const { output: _output, ...rest } = r;
  return { ...rest, server, wrkCores: wrkTicks / 100 / ((performance.now() - started) / 1000) };
}

/** An open-loop run (after CFG.warmupS of warm-up) with the CPUs held awake (when allowed; see lib/cpuWake.ts). */
async function openLoopAwake(run: Parameters<typeof runOpenLoop>[0], hold = true): Promise<LatencySummary> {
  const h = hold ? holdCpusAwake() : undefined;
  if (h !== undefined) Object.assign(wake, { held: h.held, reason: h.reason });
  try {
    return await runOpenLoop({ warmupS: CFG.warmupS, ...run });
  } finally {
    h?.release();
  }
}

/** The targets' note on the DAMON monitors: silent where none runs, loud where one could not be paused. */
function damonNote(): string {
  if (damon.paused) return " The machine's DAMON memory monitor was paused during the measurements (see Method).";
  if (runningKdamonds().length === 0) return '';
  return ` **The machine's DAMON memory monitor could not be paused** (${damon.reason}): p99s include its stalls (see Method).`;
}

async function measureLatency(s: Scenario, t: Target, rate: number, fraction: number): Promise<LatencyStep> {
  const sampler = new ProcSampler(t.pids);
  const r = await openLoopAwake({
    port: t.port,
    rate,
    durationS: CFG.stepS,
    connections: CFG.connections,
    next: () => {
      const k = pickKind(s);
      return rawPost(t.prefix + k.path, k.js(), auth.value);
    },
    onTick: (done, el) => (live = `${Math.round(done / Math.max(el, 0.001)).toLocaleString('en-US')} req/s answered`),
  });
  return { ...r, loadFraction: fraction, server: sampler.stop() };
}

async function runAutocannon(s: Scenario, t: Target, durationS: number): Promise<AutocannonRun> {
  const result = await new Promise<autocannon.Result>((resolvePromise, reject) => {
    const inst = autocannon(
      {
        url: `http://127.0.0.1:${t.port}`,
        connections: CFG.connections,
        duration: durationS,
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: auth.value },
        requests: [
          {
            setupRequest: (req) => {
              const k = pickKind(s);
              return { ...req, method: 'POST', path: t.prefix + k.path, body: k.js() };
            },
          },
        ],
      },
      (err: unknown, res: autocannon.Result) => (err ? reject(err as Error) : resolvePromise(res)),
    );
    let answered = 0;
    const started = performance.now();
    inst.on('response', () => answered++);
    inst.on('tick', () => (live = `autocannon ${Math.round(answered / ((performance.now() - started) / 1000)).toLocaleString('en-US')} req/s`));
  });
  return { system: t.system, requestsPerSec: result.requests.average, latencyP50Ms: result.latency.p50, latencyP99Ms: result.latency.p99, non2xx: result.non2xx, errors: result.errors + result.timeouts, requests: result.requests, latency: result.latency };
}

type Peaks = Map<string, PeakResult[]>;
const cellKey = (scenario: string, system: SystemId): string => `${scenario}/${system}`;

/**
 * wrk peaks of every scenario on every target it names, CFG.rounds rounds each. Within a
 * round the systems run one after another, in an order rotated from round to round, so a
 * slow phase of the shared machine falls on all systems of a scenario alike and a ratio
 * compares runs seconds apart, not a quarter of an hour.
 */
async function measurePeaks(targets: Target[]): Promise<Peaks> {
  const peaks: Peaks = new Map();
  for (const s of SCENARIOS) {
    const here = targets.filter((t) => s.systems.includes(t.system));
    for (let r = 0; r < CFG.rounds; r++) {
      for (let i = 0; i < here.length; i++) {
        const t = here[(i + r) % here.length] as Target;
        progress(`${s.id} · ${SYSTEM_NAMES[t.system]} · peak round ${r + 1}/${CFG.rounds} (wrk ${CFG.peakS}s)`);
        const list = peaks.get(cellKey(s.id, t.system)) ?? [];
        list.push(await measurePeak(s, t));
        peaks.set(cellKey(s.id, t.system), list);
      }
    }
  }
  return peaks;
}

/** The round with the median req/s (the slower of the two middle ones for an even count). */
function medianRound(rounds: PeakResult[]): PeakResult {
  const sorted = [...rounds].sort((a, b) => a.requestsPerSec - b.requestsPerSec);
  return sorted[Math.floor((sorted.length - 1) / 2)] as PeakResult;
}

/** Completes the cells of `t`: open-loop latency at fractions of its median peak (and autocannon for keyward process). */
async function measureLatencies(t: Target, peaks: Peaks): Promise<void> {
  for (const s of SCENARIOS) {
    const rounds = peaks.get(cellKey(s.id, t.system));
    if (rounds === undefined) continue;
    const peak = medianRound(rounds);
    const latency: LatencyStep[] = [];
    for (const f of LOADS) {
      const rate = Math.max(100, Math.round(peak.requestsPerSec * f));
      progress(`${s.id} · ${SYSTEM_NAMES[t.system]} · open loop ${Math.round(f * 100)}% = ${rate.toLocaleString('en-US')} req/s`);
      latency.push(await measureLatency(s, t, rate, f));
    }
    if (t.system === 'keyward-process') {
      progress(`${s.id} · ${SYSTEM_NAMES[t.system]} · autocannon closed loop ${CFG.autocannonS}s`);
      autocannonRuns[s.id] = await runAutocannon(s, t, CFG.autocannonS);
    }
    cells.push({ scenario: s.id, system: t.system, peak, rounds, latency });
  }
}

/** Peaks and latencies of targets that run at the same time (peaks alternating between them). */
async function measureSystems(targets: Target[]): Promise<void> {
  const peaks = await measurePeaks(targets);
  for (const t of targets) await measureLatencies(t, peaks);
}

// ---------------------------------------------------------------- setup and run
const work = benchTempDir('keyward-suite-');
const keyFiles = { limited: join(work, 'limited.txt'), plain: join(work, 'plain.txt') };
const replySizes: Record<string, number> = {};
const errors: string[] = [];
let rootKey = '';
let dataDir = '';

async function post(port: number, path: string, body: string): Promise<string> {
  return (await fetch(`http://127.0.0.1:${port}${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json', Authorization: auth.value }, body })).text();
}

async function withProc<T>(p: Proc, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } finally {
    await p.stop();
  }
}

/** Every system must run: a missing tool fails the suite before anything is measured. */
function preflight(): void {
  for (const [cmd, args, pkg] of [['wrk', ['-v'], 'wrk'], ['redis-server', ['--version'], 'redis-server']] as const) {
    const res = spawnSync(cmd, [...args], { encoding: 'utf8' });
    if (res.error !== undefined) throw new Error(`${cmd} is not installed (${res.error.message}); the suite needs it for the ${cmd === 'wrk' ? 'peak throughput runs' : 'node:http + Redis peer'}: apt-get install ${pkg} (npm run bench installs it when run as root)`);
  }
}

async function main(): Promise<void> {
  preflight();
  mkdirSync(outDir, { recursive: true });
  note(`keyward bench suite (${full ? 'full' : 'short'}): results in ${relative(process.cwd(), outDir) || '.'}; about ${Math.round(estimateS)} s`);

  // keyward (process), the ceiling and the Redis peers run side by side, so that their peaks
  // can alternate (measurePeaks); keyward (disk) runs afterwards on the same store.
  const running: Proc[] = [];
  try {
    // 1. keyward, durability process: seed through the real createKey code.
    progress(`seeding ${CFG.keys.toLocaleString('en-US')} + ${CFG.keys.toLocaleString('en-US')} keys into keyward`);
    const kw = await startKeyward({ KEYWARD_DURABILITY: 'process' });
    running.push(kw);
    auth.value = `Bearer ${kw.rootKey}`;
    rootKey = kw.rootKey;
    dataDir = kw.dataDir;
    const created = JSON.parse(await post(kw.port, '/v2/apis.createApi', JSON.stringify({ name: 'bench' }))) as { data?: { apiId: string } };
    if (created.data === undefined) throw new Error('keyward: apis.createApi failed');
    apiId = created.data.apiId;
    openStore(dataDir);
    try {
      limitedKeys = await seedKeys(apiId, CFG.keys, LIMITED_KEY, (n) => (live = `${n.toLocaleString('en-US')} with credits`));
      plainKeys = await seedKeys(apiId, CFG.keys, {}, (n) => (live = `${n.toLocaleString('en-US')} plain`));
    } finally {
      native.close();
    }
    writeFileSync(keyFiles.limited, limitedKeys.join('\n') + '\n');
    writeFileSync(keyFiles.plain, plainKeys.join('\n') + '\n');
    for (const [name, k] of Object.entries(KINDS)) {
      const reply = await post(kw.port, k.path, k.js());
      if (!/"(valid|success)":true|"keyId"/.test(reply)) throw new Error(`keyward: sample ${name} request failed: ${reply}`);
      replySizes[k.path] = Math.max(replySizes[k.path] ?? 0, Buffer.byteLength(reply));
    }

    // 2. The ceiling, with the generators' own limits measured against it.
    progress('starting the uWS ceiling; measuring the load generators');
    const ceiling = await startCeiling({ ...replySizes, default: replySizes['/v2/keys.verifyKey'] ?? 64 });
    running.push(ceiling);
    const ceilingTarget: Target = { system: 'uws-ceiling', port: ceiling.port, prefix: '', pids: [ceiling.child.pid ?? 0] };
    const probe = SCENARIOS.find((s) => s.id === 'limit-hot') ?? SCENARIOS[0]!;
    const hot = (): string => rawPost(KINDS.limitHot.path, HOT_BODY, auth.value);
    const offered = 200_000;
    const ol = await openLoopAwake({ port: ceiling.port, rate: offered, durationS: Math.min(2, CFG.stepS), connections: CFG.connections, next: hot });
    // The floor of the latency measurement: the do-nothing ceiling at a low fixed rate, with
    // and without the CPUs held awake.
    const floorRps = 5_000;
    const floorRun = { port: ceiling.port, rate: floorRps, durationS: CFG.stepS, connections: CFG.connections, next: hot };
    // And at about half of keyward's peak, with the DAMON monitors running (as the machine
    // has them), then paused for the rest of the suite.
    const damonRun = { ...floorRun, rate: DAMON_PROBE_RPS };
    const damonRunning = await openLoopAwake(damonRun);
    // Once, to the end of the suite, rather than around each open-loop run: restarting a
    // monitor dozens of times per suite would be a disturbance of its own (a short run that
    // did so read the do-nothing ceiling's p99 at half load at 8–12 ms; this VM's noise may
    // have done that as well). Released after main() (below).
    damon = pauseDamon();
    const damonPaused = await openLoopAwake(damonRun);
    const floorHeld = await openLoopAwake(floorRun);
    const floorFree = await openLoopAwake(floorRun, false);
    const ac = await runAutocannon(probe, ceilingTarget, CFG.autocannonS);
    const wrkProbe = await measurePeak(probe, ceilingTarget);
    calibration = { openLoopMaxRps: ol.sentRps, openLoopOffered: offered, openLoopCores: ol.generatorCores, autocannonCeilingRps: ac.requestsPerSec, wrkCeilingCores: wrkProbe.wrkCores, floorRps, floorP99HeldMs: floorHeld.p99Ms, floorP99FreeMs: floorFree.p99Ms, damonRps: DAMON_PROBE_RPS, damonP99PausedMs: damonPaused.p99Ms, damonP99RunningMs: damonRunning.p99Ms };
    autocannonRuns['calibration-ceiling'] = ac;

    // 3. node:http + Redis (Lua) and rate-limiter-flexible, same keys.
    progress('starting redis-server and the node:http + Redis peer; seeding Redis');
    const redis = await startRedis().catch((err: Error) => {
      throw new Error(`the Redis peer cannot run: ${err.message}`);
    });
    running.push(redis);
    const client = new Redis({ host: '127.0.0.1', port: redis.port, lazyConnect: true });
    await client.connect();
    for (let i = 0; i < limitedKeys.length; i += 1000) {
      const pipe = client.pipeline();
      for (const k of limitedKeys.slice(i, i + 1000)) pipe.hset(keyHashKey(k), { id: `key_l${i}_${k.slice(0, 6)}`, enabled: 1, expires: 0, credits: 1_000_000_000, rlLimit: 1_000_000_000, rlDuration: 60_000 });
      for (const k of plainKeys.slice(i, i + 1000)) pipe.hset(keyHashKey(k), { id: `key_p${i}_${k.slice(0, 6)}`, enabled: 1, expires: 0 });
      await pipe.exec();
    }
    client.disconnect();
    const peer = await startRedisPeer(redis.port, rootKey);
    running.push(peer);
    for (const [name, k] of Object.entries(KINDS)) {
      const reply = await post(peer.port, k.path, k.js());
      if (!/"(valid|success)":true|"keyId"/.test(reply)) throw new Error(`Redis peer: sample ${name} request failed: ${reply}`);
    }
    const peerPids = [peer.child.pid ?? 0, redis.child.pid ?? 0];

    // 4. Measure them, peaks alternating.
    await measureSystems([
      { system: 'keyward-process', port: kw.port, prefix: '', pids: [kw.child.pid ?? 0] },
      ceilingTarget,
      { system: 'redis-lua', port: peer.port, prefix: '', pids: peerPids },
      { system: 'redis-rlflex', port: peer.port, prefix: '/rlflex', pids: peerPids },
    ]);
  } finally {
    for (const p of running.reverse()) await p.stop();
  }

  // 5. keyward, durability disk, on the same store (a store is served by one process at a time).
  progress('starting keyward (disk)');
  const kwd = await startKeyward({ KEYWARD_DURABILITY: 'disk', KEYWARD_DATA_DIR: dataDir, KEYWARD_ROOT_KEY: rootKey });
  await withProc(kwd, () => measureSystems([{ system: 'keyward-disk', port: kwd.port, prefix: '', pids: [kwd.child.pid ?? 0] }]));

  // 6. Moving in and analytics, each bench in a process of its own.
  for (const x of EXTRAS) {
    progress(x.title);
    extras.push({ title: x.title, command: `npm run bench:${x.script} -- ${x.args.join(' ')}`, report: await runExtra(x.script, x.args) });
  }

  for (const c of cells) {
    const bad = c.peak.non2xx + c.peak.errors + c.latency.reduce((a, l) => a + l.non2xx + l.errors, 0);
    if (bad > 0) errors.push(`${c.scenario} · ${SYSTEM_NAMES[c.system]}: ${bad} non-2xx replies or socket errors`);
  }
  writeOutputs();
}

const extras: { title: string; command: string; report: string }[] = [];

/** Runs dist/bench/<script>.js with `args`; its report (stdout), or what went wrong (also counted as an error). */
function runExtra(script: string, args: string[]): Promise<string> {
  return new Promise((resolvePromise) => {
    execFile(process.execPath, [join(dirname(fileURLToPath(import.meta.url)), `${script}.js`), ...args], { maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      if (err === null) return resolvePromise(stdout.trim());
      const why = `${script} failed: ${err.message.split('\n')[0] ?? ''} ${stderr.trim().split('\n').slice(-3).join(' ')}`;
      errors.push(why);
      resolvePromise(`**Not measured**: ${why}`);
    });
  });
}

// ---------------------------------------------------------------- report
const n0 = (v: number): string => (Number.isFinite(v) ? Math.round(v).toLocaleString('en-US') : '–');
const f2 = (v: number): string => (Number.isFinite(v) ? v.toFixed(2) : '–');
const cell = (scenario: string, system: SystemId): Cell | undefined => cells.find((c) => c.scenario === scenario && c.system === system);
const peakOf = (scenario: string, system: SystemId): number => cell(scenario, system)?.peak.requestsPerSec ?? Number.NaN;
const p99At = (scenario: string, system: SystemId, f: number): number => cell(scenario, system)?.latency.find((l) => l.loadFraction === f)?.p99Ms ?? Number.NaN;

/** The server's disk writes at its peak (/proc/<pid>/io write_bytes): MB/s and bytes per request. */
const diskCells = (p: PeakResult): string => {
  const perS = p.server.diskBytes / p.server.wallS;
  return Number.isNaN(perS) ? 'n/a | n/a' : `${(perS / 1e6).toFixed(1)} | ${n0(perS / p.requestsPerSec)}`;
};
/** CPU used on the machine by anything but the server, wrk and the bench process (other users). */
const otherPeak = (p: PeakResult): number => Math.max(0, p.server.machineBusyCores - p.server.busyCores - p.wrkCores - p.server.benchCores);
const otherLat = (l: LatencyStep): number => Math.max(0, l.server.machineBusyCores - l.server.busyCores - l.server.benchCores - l.generatorCores);
const OTHER_LOAD_LIMIT = 0.25;

function machine(): Record<string, string> {
  const sh = (cmd: string, args: string[]): string => {
    try {
      return execFileSync(cmd, args, { encoding: 'utf8' }).trim().split('\n')[0] ?? '';
    } catch {
      return 'unknown';
    }
  };
  return {
    cpus: `${cpus().length} × ${cpus()[0]?.model ?? 'unknown'}`,
    memory: `${(totalmem() / 2 ** 30).toFixed(1)} GiB`,
    kernel: `Linux ${release()}`,
    node: process.version,
    wrk: `wrk ${/(\d+\.\d+\.\d+)/.exec(sh('sh', ['-c', 'wrk -v 2>&1 | head -1']))?.[1] ?? 'unknown'}`,
    redis: `Redis ${/v=(\S+)/.exec(sh('redis-server', ['--version']))?.[1] ?? 'unknown'}`,
  };
}

interface PreviousRun {
  dir: string;
  /** Runs from before the alternating rounds have no `rounds`. */
  cells: (Omit<Cell, 'rounds'> & { rounds?: PeakResult[] })[];
}

function previousRun(): PreviousRun | undefined {
  const base = join(ROOT, 'bench', 'results');
  if (!existsSync(base)) return undefined;
  const dirs = readdirSync(base).filter((d) => resolve(base, d) !== outDir && existsSync(join(base, d, 'raw.json'))).sort();
  for (const d of dirs.reverse()) {
    try {
      const raw = JSON.parse(readFileSync(join(base, d, 'raw.json'), 'utf8')) as { full: boolean; cells: PreviousRun['cells'] };
      if (raw.full === full) return { dir: d, cells: raw.cells };
    } catch {
      // an unreadable earlier run is skipped
    }
  }
  return undefined;
}

/** How far a cell's peak rounds are apart: (max − min) ÷ median, in % (0 for one round; NaN for a run from before rounds). */
function roundSpread(c: { rounds?: PeakResult[] }): number {
  const xs = (c.rounds ?? []).map((r) => r.requestsPerSec);
  return xs.length === 0 ? Number.NaN : ((Math.max(...xs) - Math.min(...xs)) / median(xs)) * 100;
}

/** keyward (process) ÷ the ceiling, round by round (each round measured both within minutes). */
function roundRatios(scenario: string): number[] {
  const a = cell(scenario, 'keyward-process')?.rounds ?? [];
  const b = cell(scenario, 'uws-ceiling')?.rounds ?? [];
  return a.map((r, i) => r.requestsPerSec / (b[i]?.requestsPerSec ?? Number.NaN));
}

interface NoiseData {
  medianRoundSpreadPct: number;
  maxRoundSpreadPct: number;
  /** The comparison with the previous run of this mode, when there is one. */
  previous?: { dir: string; medianPeakDeltaPct: number; maxPeakDeltaPct: number; medianP99DeltaPct: number; maxP99DeltaPct: number; cellsOutsideBand: number; cellsCompared: number };
}

function noise(prev: PreviousRun | undefined): { text: string; data: NoiseData } {
  const spreads = cells.map(roundSpread);
  const within = `Within this run, the ${CFG.rounds} peak rounds of a cell (alternating with the other systems of the scenario) are a median of ${median(spreads).toFixed(1)}% apart (largest ${Math.max(...spreads).toFixed(1)}%; max − min over median, per cell in the scenario tables). That is the noise of one peak number on this machine.`;
  if (prev === undefined) return { text: `${within}\n\nNo earlier run of this mode in bench/results/ to compare with: run the suite twice to measure the run-to-run variation.`, data: { medianRoundSpreadPct: median(spreads), maxRoundSpreadPct: Math.max(...spreads) } };
  const rows: string[] = [];
  const peakDeltas: number[] = [];
  const p99Deltas: number[] = [];
  const outside: string[] = [];
  for (const c of cells) {
    const p = prev.cells.find((x) => x.scenario === c.scenario && x.system === c.system);
    if (p === undefined) continue;
    const dPeak = (c.peak.requestsPerSec / p.peak.requestsPerSec - 1) * 100;
    // The band a difference must leave to be more than noise: the larger round spread of the two runs.
    const band = Math.max(roundSpread(c), Number.isFinite(roundSpread(p)) ? roundSpread(p) : 0);
    if (Math.abs(dPeak) > band) outside.push(`${c.scenario} · ${SYSTEM_NAMES[c.system]} (${dPeak >= 0 ? '+' : ''}${dPeak.toFixed(1)}%, band ${band.toFixed(1)}%)`);
    const a = c.latency.find((l) => l.loadFraction === 0.5)?.p99Ms ?? Number.NaN;
    const b = p.latency.find((l) => l.loadFraction === 0.5)?.p99Ms ?? Number.NaN;
    const dP99 = (a / b - 1) * 100;
    peakDeltas.push(Math.abs(dPeak));
    if (Number.isFinite(dP99)) p99Deltas.push(Math.abs(dP99));
    rows.push(`| ${c.scenario} | ${SYSTEM_NAMES[c.system]} | ${n0(p.peak.requestsPerSec)} | ${n0(c.peak.requestsPerSec)} | ${dPeak >= 0 ? '+' : ''}${dPeak.toFixed(1)}% | ${band.toFixed(1)}% | ${f2(b)} → ${f2(a)} |`);
  }
  const max = (xs: number[]): number => Math.max(...xs);
  const text = [
    within,
    '',
    `Compared with the previous run of this mode (\`bench/results/${prev.dir}\`): peak req/s differs by a median of ${median(peakDeltas).toFixed(1)}% (largest ${max(peakDeltas).toFixed(1)}%); p99 at 50% load by a median of ${median(p99Deltas).toFixed(0)}% (largest ${max(p99Deltas).toFixed(0)}%). ${rows.length - outside.length} of ${rows.length} cells differ by less than the larger round spread of the two runs (their noise band)${outside.length > 0 ? `; outside it: ${outside.join('; ')}` : ''}.`,
    '',
    '<details><summary>per system</summary>',
    '',
    '| scenario | system | previous req/s | this run req/s | Δ | noise band | p99 @50% ms (previous → this) |',
    '|---|---|---|---|---|---|---|',
    ...rows,
    '',
    '</details>',
  ].join('\n');
  const previous = { dir: prev.dir, medianPeakDeltaPct: median(peakDeltas), maxPeakDeltaPct: max(peakDeltas), medianP99DeltaPct: median(p99Deltas), maxP99DeltaPct: max(p99Deltas), cellsOutsideBand: outside.length, cellsCompared: rows.length };
  return { text, data: { medianRoundSpreadPct: median(spreads), maxRoundSpreadPct: Math.max(...spreads), previous } };
}

function targets(): { rows: string[]; met: number; total: number } {
  const rows: string[] = [];
  let met = 0;
  const check = (what: string, value: number, goal: number, unit: string, le = false, detail = ''): void => {
    const ok = Number.isFinite(value) && (le ? value <= goal : value >= goal);
    if (ok) met++;
    rows.push(`| ${what} | ${le ? '≤' : '≥'} ${goal}${unit} | ${targetFigure(value, goal, le)}${unit}${detail} | ${ok ? 'met' : '**not met**'} |`);
  };
  // The ratio of the median rounds; the per-round ratios show how much one round can move it.
  const ceilingRatio = (what: string, id: string, goal: number): void =>
    check(what, peakOf(id, 'keyward-process') / peakOf(id, 'uws-ceiling'), goal, '', false, ` (rounds: ${roundRatios(id).map(f2).join(', ')})`);
  ceilingRatio('verifyKey (credits + limit) req/s ÷ uWS ceiling', 'verify-credits', 0.6);
  ceilingRatio('verifyKey (plain) req/s ÷ uWS ceiling', 'verify-plain', 0.6);
  ceilingRatio('limit (many identifiers) req/s ÷ uWS ceiling', 'limit-many', 0.65);
  ceilingRatio('limit (hot identifier) req/s ÷ uWS ceiling', 'limit-hot', 0.65);
  // The issue's targets concern verifyKey and limit; mixed and createKey ratios are in the summary only.
  const targeted = ['verify-credits', 'verify-plain', 'limit-many', 'limit-hot'];
  // With it, the do-nothing ceiling's own ratio to the peer: what any server on uWS could reach
  // against this peer in this run (keyward's is that times its ratio to the ceiling).
  for (const id of targeted) {
    const redis = peakOf(id, 'redis-lua');
    check(`${id}: keyward (process) ÷ node:http + Redis Lua`, peakOf(id, 'keyward-process') / redis, 3, '×', false, ` (the do-nothing uWS ceiling: ${f2(peakOf(id, 'uws-ceiling') / redis)}×)`);
  }
  for (const id of targeted) check(`${id}: p99 at 50% of keyward (process) peak`, p99At(id, 'keyward-process', 0.5), 2, ' ms', true);
  return { rows, met, total: rows.length };
}

function writeOutputs(): void {
  const m = machine();
  const prev = previousRun();
  const nz = noise(prev);
  const tg = targets();
  const charts: string[] = [];
  const contended = cells
    .map((c) => ({ c, other: Math.max(otherPeak(c.peak), ...c.latency.map(otherLat)) }))
    .filter((x) => x.other > OTHER_LOAD_LIMIT)
    .map((x) => `${x.c.scenario} · ${SYSTEM_NAMES[x.c.system]} (up to ${f2(x.other)} cores)`);
  // Plots.
  writeFileSync(
    join(outDir, 'throughput.svg'),
    barChart('Peak throughput (wrk -t1 -c64, closed loop)', 'req/s', SCENARIOS.map((s) => ({ label: s.id, bars: SYSTEM_ORDER.filter((sys) => s.systems.includes(sys)).map((sys) => ({ series: SYSTEM_NAMES[sys], value: peakOf(s.id, sys) || 0 })) }))),
  );
  charts.push('![peak throughput](throughput.svg)');
  for (const s of SCENARIOS) {
    const lines: Line[] = [];
    s.systems.forEach((sys) => {
      const c = cell(s.id, sys);
      if (c === undefined) return;
      const ci = SYSTEM_ORDER.indexOf(sys);
      lines.push({ name: `${SYSTEM_NAMES[sys]} p50`, colorIndex: ci, dashed: true, points: c.latency.map((l) => ({ x: l.offeredRps, y: l.p50Ms })) });
      lines.push({ name: `${SYSTEM_NAMES[sys]} p99`, colorIndex: ci, points: c.latency.map((l) => ({ x: l.offeredRps, y: l.p99Ms })) });
    });
    writeFileSync(join(outDir, `latency-${s.id}.svg`), lineChart(`${s.id}: latency vs offered load (open loop, from scheduled time)`, 'offered load, req/s', 'latency, ms (log)', lines));
    charts.push(`![latency ${s.id}](latency-${s.id}.svg)`);
  }

  const summary = [
    '| scenario | keyward process req/s | keyward disk req/s | uWS ceiling req/s | keyward ÷ ceiling | node:http + Redis req/s | keyward ÷ Redis | rate-limiter-flexible req/s | p99 @50% (process) ms |',
    '|---|---|---|---|---|---|---|---|---|',
    ...SCENARIOS.map((s) => {
      const kp = peakOf(s.id, 'keyward-process');
      return `| ${s.id} | ${n0(kp)} | ${n0(peakOf(s.id, 'keyward-disk'))} | ${n0(peakOf(s.id, 'uws-ceiling'))} | ${f2(kp / peakOf(s.id, 'uws-ceiling'))} | ${n0(peakOf(s.id, 'redis-lua'))} | ${f2(kp / peakOf(s.id, 'redis-lua'))}× | ${s.systems.includes('redis-rlflex') ? n0(peakOf(s.id, 'redis-rlflex')) : '–'} | ${f2(p99At(s.id, 'keyward-process', 0.5))} |`;
    }),
  ].join('\n');

  const sections = SCENARIOS.map((s) => {
    const peakRows = s.systems.map((sys) => {
      const c = cell(s.id, sys);
      if (c === undefined) return `| ${SYSTEM_NAMES[sys]} | missing |`;
      const p = c.peak;
      return `| ${SYSTEM_NAMES[sys]} | ${n0(p.requestsPerSec)} | ${c.rounds.map((r) => n0(r.requestsPerSec)).join(' · ')} (${roundSpread(c).toFixed(1)}%) | ${f2(p.server.busyCores)} | ${n0(p.requestsPerSec / p.server.busyCores)} | ${n0(p.server.rssMaxMiB)} | ${diskCells(p)} | ${f2(p.latencyP50Ms)} | ${f2(p.latencyP99Ms)} | ${f2(p.wrkCores)} | ${f2(otherPeak(p))} | ${p.non2xx + p.errors} |`;
    });
    const latRows = s.systems.flatMap((sys) =>
      (cell(s.id, sys)?.latency ?? []).map(
        (l) =>
          `| ${SYSTEM_NAMES[sys]} | ${Math.round(l.loadFraction * 100)}% | ${n0(l.offeredRps)} | ${n0(l.sentRps)} | ${f2(l.p50Ms)} | ${f2(l.p90Ms)} | ${f2(l.p99Ms)} | ${f2(l.p999Ms)} | ${f2(l.maxMs)} | ${f2(l.serviceP99Ms)} | ${f2(l.sendLagP99Ms)} | ${l.tickUs} | ${f2(l.generatorCores)} | ${f2(l.server.busyCores)} | ${n0(l.server.rssMaxMiB)} | ${f2(otherLat(l))} | ${l.non2xx + l.errors} |`,
      ),
    );
    const ac = autocannonRuns[s.id];
    return [
      `### ${s.title}`,
      '',
      `Peak (wrk, closed loop, ${CFG.rounds} rounds of ${CFG.peakS} s alternating between the systems; the median round, whose server figures are shown, and every round with their spread):`,
      '',
      '| system | req/s | rounds req/s (spread) | server busy cores | req/s per busy core | server RSS max MiB | server disk writes MB/s | disk bytes per request | wrk p50 ms | wrk p99 ms | wrk cores | other load (cores) | non-2xx + errors |',
      '|---|---|---|---|---|---|---|---|---|---|---|---|---|',
      ...peakRows,
      '',
      `Latency at fixed offered load (open loop, ${CFG.stepS} s per step after ${CFG.warmupS} s of warm-up not counted; latency from the scheduled send time; "service p99" from the actual send; "send lag" = the generator's own lateness; "tick µs" = the generator's tick, 0 when it wakes for each request and answer (see Limits of the tools); "generator cores" = the CPU the generator used):`,
      '',
      '| system | load | offered req/s | sent on schedule req/s | p50 ms | p90 ms | p99 ms | p99.9 ms | max ms | service p99 ms | send lag p99 ms | tick µs | generator cores | server busy cores | server RSS MiB | other load (cores) | non-2xx + errors |',
      '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
      ...latRows,
      '',
      ac === undefined ? '' : `autocannon (closed loop, ${CFG.connections} connections, ${CFG.autocannonS} s) against keyward (process): ${n0(ac.requestsPerSec)} req/s, p50 ${f2(ac.latencyP50Ms)} ms, p99 ${f2(ac.latencyP99Ms)} ms (histograms in raw.json).`,
      '',
      `![latency ${s.id}](latency-${s.id}.svg)`,
      '',
    ].join('\n');
  });

  const report = [
    `# keyward capacity benchmark — ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC (${full ? 'full' : 'short'} run)`,
    '',
    `Command: \`${COMMAND}\` (the same as \`keyward bench${argv.length > 0 ? ` ${argv.join(' ')}` : ''}\`), wall time ${elapsed().toFixed(0)} s.`,
    '',
    `Machine: ${m.cpus}, ${m.memory}, ${m.kernel}, Node ${m.node}, ${m.wrk}, ${m.redis}. The load generators run **on the same machine** as the server under test: every number here is the server *and* its load generator sharing ${cpus().length} cores.`,
    '',
    errors.length > 0 ? `**Errors in this run:**\n\n${errors.map((e) => `- ${e}`).join('\n')}\n` : '',
    contended.length > 0
      ? `**Other processes used CPU during ${contended.length} of ${cells.length} measurements** (more than ${OTHER_LOAD_LIMIT} cores besides the server, wrk and the bench; column "other load"): ${contended.join('; ')}. Those numbers understate the systems measured and should be re-run on a quiet machine.\n`
      : `No other process used more than ${OTHER_LOAD_LIMIT} cores during any measurement (column "other load").\n`,
    '## Summary',
    '',
    summary,
    '',
    `Targets: ${tg.met} of ${tg.total} met.`,
    '',
    '| target | goal | measured | |',
    '|---|---|---|---|',
    ...tg.rows,
    '',
    `The p99 targets are measured with the open-loop generator of this run, whose own p99 against the do-nothing uWS ceiling was ${f2(p99At('verify-credits', 'uws-ceiling', 0.1))} ms at ${n0(cell('verify-credits', 'uws-ceiling')?.latency[0]?.offeredRps ?? Number.NaN)} req/s and ${f2(p99At('verify-credits', 'uws-ceiling', 0.5))} ms at ${n0(cell('verify-credits', 'uws-ceiling')?.latency[1]?.offeredRps ?? Number.NaN)} req/s (the floor of what it can resolve here). ${wake.held ? 'The CPUs were held out of their sleep states during every open-loop run (see Method).' : `**The CPUs could not be held out of their sleep states** (${wake.reason}; run the suite as root): p99s include the machine's wake-up latency.`}${damonNote()}`,
    '',
    '## Noise',
    '',
    nz.text,
    '',
    '## Method',
    '',
    `- Data: the bench seeds ${CFG.keys.toLocaleString('en-US')} keys with credits (10⁹) and one autoApply limit (10⁹ per minute), and ${CFG.keys.toLocaleString('en-US')} plain keys, into keyward through the real \`keys.createKey\` handler (in-process, on the server's LMDB store), and the same key strings into Redis (hash \`k:<base64 SHA-256 of the key>\`). Limit scenarios draw identifiers uniformly at random from ${CFG.identifiers.toLocaleString('en-US')} (limit 10⁶ per hour, so nothing is refused) or use one hot identifier; identifiers start without a window in every system, so windows are created as the run goes (\`npm run bench:limit\` measures keyward with all 1,000,000 windows live).${full ? '' : ' The short run uses fewer keys and identifiers than `--full` (100,000 keys, 1,000,000 identifiers).'}`,
    `- Systems, on the same machine and generators: keyward (one serving thread) with durability \`process\` and, afterwards, \`disk\` on the same store; a bare uWebSockets.js server answering every path with a reply of the same size as keyward's (the ceiling); node:http + Redis ${(m.redis ?? '').replace(/^Redis /, '')} with Lua scripts (EVALSHA) doing the same verification (hash lookup, disabled/expiry check, the same sliding-window limit, atomic credit decrement) and the same sliding-window limit, ioredis with auto-pipelining; rate-limiter-flexible's \`RateLimiterRedis\` through the same node:http server for the limit scenarios (note: a fixed window, not a sliding one).`,
    '- **Redis durability**: redis-server runs with `--save "" --appendonly no`: it keeps nothing across a crash, while keyward in `process` mode survives a process crash (LMDB, written at commit, not fsynced) and in `disk` mode a power loss. The Redis peer is therefore favoured on durability.',
    `- Peak throughput: wrk (Debian) \`-t1 -c${CFG.connections}\`, a Lua script building each request (random key / identifier). keyward (process), the ceiling and the Redis peers run side by side, and each scenario is measured in ${CFG.rounds} rounds of ${CFG.peakS} s per system, the systems one after another within a round in an order rotated from round to round; a cell's peak is its median round (the slower of two), so a slow phase of this shared VM falls on all systems alike and one bad round does not decide a ratio. keyward (disk) runs its ${CFG.rounds} rounds afterwards on the same store. Server CPU = utime + stime from /proc/<pid>/stat over the run (for the Redis peer: node:http process + redis-server); "busy cores" = CPU seconds ÷ wall seconds; "req/s per busy core" = req/s ÷ busy cores; RSS = largest VmRSS sampled every 200 ms; disk writes = \`write_bytes\` of /proc/<pid>/io over the run (what the server's processes made the kernel send to the disk, background fsyncs included; the Redis peer runs without persistence), per second and per request.`,
    `- Latency: an open-loop generator (bench/native/openloop.c, one C thread with epoll, driven by bench/lib/openLoop.ts; ${CFG.connections} keep-alive connections; ticked from ${n0(TICKED_FROM_RPS)} req/s, see Limits of the tools): requests are due on a fixed schedule at 10%, 50% and 90% of that system's own wrk peak, wait for a free connection when all are busy, and their latency counts from the scheduled time, so stalls are not hidden (no coordinated omission). Each run first keeps the same schedule for ${CFG.warmupS} s on the same connections without counting it, as wrk2 does with its calibration period: the first few hundred ms of a run (new connections, and the bench process collecting the garbage of drawing the run's requests, on the same 2 cores) delayed several hundred requests by 2–7 ms in every system, the do-nothing ceiling included. Percentiles from an HdrHistogram (raw histograms in raw.json, compressed base64, µs). During every open-loop run the bench holds a PM QoS request of 0 µs on /dev/cpu_dma_latency (bench/lib/cpuWake.ts, as latency benchmarks and tuned's latency-performance profile do), so idle CPUs poll instead of halting: on this VM a halted vCPU can take several ms to run again when a packet arrives, which otherwise decides the p99 of every system at low load — the do-nothing ceiling at ${n0(calibration.floorRps)} req/s: p99 ${f2(calibration.floorP99HeldMs)} ms held, ${f2(calibration.floorP99FreeMs)} ms not held${wake.held ? '' : ` (**not held in this run**: ${wake.reason})`}. Peaks (closed loop, CPUs busy) run without it. ${damon.paused ? `The bench also pauses the kernel's DAMON memory monitors (kdamond) from the calibration on, for peaks and open-loop runs alike (bench/lib/damon.ts; they are turned back on when the suite ends, by a watchdog process if the bench dies): this VM runs one on physical memory for the host's memory reclaim, sampling every 512 ms, and each sample stalls every process on the machine for about 2–3 ms, which an open-loop run counts in every request it delays — the do-nothing ceiling at ${n0(calibration.damonRps)} req/s: p99 ${f2(calibration.damonP99PausedMs)} ms paused, ${f2(calibration.damonP99RunningMs)} ms running.` : `DAMON: ${damon.reason} (the do-nothing ceiling at ${n0(calibration.damonRps)} req/s: p99 ${f2(calibration.damonP99PausedMs)} ms).`}`,
    `- autocannon (programmatic, closed loop, ${CFG.connections} connections) runs once per scenario against keyward (process) as a cross-check of the Node-side view; its HDR histogram summaries are in raw.json.`,
    '',
    '## Limits of the tools',
    '',
    `- wrk is closed-loop (a connection sends its next request when the previous one is answered), one thread, and shares the ${cpus().length} cores with the server: against the ceiling it used ${f2(calibration.wrkCeilingCores)} cores. Peak numbers are therefore "server + generator on ${cpus().length} cores", and the ceiling is bounded by wrk as much as by uWS. wrk's own p99 is coordinated-omission-prone; use the open-loop tables for latency.`,
    `- The open-loop generator is one C thread that never spins. Below ${n0(TICKED_FROM_RPS)} req/s it sleeps in epoll until the next request is due or an answer arrives (nanosecond timeout), so requests leave and answers are timed within the kernel's wake-up latency. From ${n0(TICKED_FROM_RPS)} req/s on it runs ticked (column "tick µs"): it wakes every ${TICK_US} µs, reads every answer that arrived and sends every request due, so a request leaves up to ${TICK_US} µs after it is due and its answer is timed up to ${TICK_US} µs after it arrived — both count in its latency, so the tick can only make latency read higher (p50s of about 0.07–0.1 ms in those rows are mostly the tick) — and requests arrive at the server in small bursts (rate × ${TICK_US} µs each) instead of evenly spaced. Ticks save about a third of the generator's CPU at these rates (against the ceiling at 50,000 req/s: 0.62 instead of 0.90 cores), CPU that it otherwise takes from the server on the same 2 cores: on this VM a sleep and a wake-up per request and per answer cost more than the request's own system calls. Offered ${n0(calibration.openLoopOffered)} req/s against the ceiling it sent ${n0(calibration.openLoopMaxRps)} req/s on schedule using ${f2(calibration.openLoopCores)} cores — its saturation point on this machine. Steps offered above that (some ceiling rows) measure the generator, not the server. It still needs more CPU per request than wrk (which never sleeps). Its own lateness (column "send lag p99") is the tick, or the kernel's wake-up latency, plus any wait for a CPU it shares with the server.`,
    `- The generator's own floor: the bare uWS ceiling does nothing, so its open-loop rows are what this generator can resolve on this machine — p99 ${f2(p99At('verify-credits', 'uws-ceiling', 0.1))} ms at 10% and ${f2(p99At('verify-credits', 'uws-ceiling', 0.5))} ms at 50% of the ceiling's peak (verify-credits). Because the generator needs more CPU than wrk for the same rate, at 90% of a system's wrk peak the server may get less CPU than during the wrk run and fall behind (latency then grows with the queue): 90% rows show the edge of saturation on a shared 2-core machine, not a comfortable operating point.`,
    `- autocannon (Node, closed loop) reached ${n0(calibration.autocannonCeilingRps)} req/s against the ceiling: a Node generator saturates well below wrk, which is why peaks come from wrk.`,
    `- One machine; ${CFG.rounds} peak rounds and one latency run per cell; see Noise for the variation between rounds and between runs.`,
    '',
    '## Scenarios',
    '',
    charts[0] ?? '',
    '',
    ...sections,
    '',
    '## Moving in and analytics',
    '',
    ...extras.flatMap((x) => [`### ${x.title}`, '', `\`${x.command}\``, '', x.report, '']),
  ].join('\n');
  writeFileSync(join(outDir, 'report.md'), report);
  writeFileSync(join(outDir, 'raw.json'), JSON.stringify({ date: new Date().toISOString(), command: COMMAND, full, config: CFG, machine: m, calibration, replySizes, noise: nz.data, errors, contended, cells, autocannon: autocannonRuns }, null, 1));
  const readme = [
    `Measured ${new Date().toISOString().slice(0, 10)} with \`${COMMAND}\` (${full ? 'full run' : 'short run'}) on ${m.cpus}, ${m.memory}, Node ${m.node}; keyward with one serving thread; wrk \`-t1 -c${CFG.connections}\`, median of ${CFG.rounds} rounds of ${CFG.peakS} s alternating between the systems for peaks, open-loop latency at 50% of each system's peak${wake.held ? ' with the CPUs held awake' : ''}${damon.paused ? ' and the VM\'s DAMON memory monitor paused' : ''}. Load generators share the machine. Redis runs without persistence. Full report: \`bench/results/${relative(join(ROOT, 'bench', 'results'), outDir)}/report.md\`.`,
    '',
    summary,
    '',
    `Targets met: ${tg.met} of ${tg.total} (see the report). Peak rounds of a cell are a median of ${nz.data.medianRoundSpreadPct.toFixed(1)}% apart.${nz.data.previous === undefined ? '' : ` Against the previous run: peak req/s differs by a median of ${nz.data.previous.medianPeakDeltaPct.toFixed(1)}%, ${nz.data.previous.cellsCompared - nz.data.previous.cellsOutsideBand} of ${nz.data.previous.cellsCompared} cells within their noise band.`}`,
  ].join('\n');
  writeFileSync(join(outDir, 'readme-section.md'), readme + '\n');
  note(`\n${summary}\n\nTargets met: ${tg.met} of ${tg.total}\nreport: ${join(outDir, 'report.md')} (${elapsed().toFixed(0)} s)`);
}

try {
  try {
    await main();
  } finally {
    damon.release();
  }
  clearInterval(drawTimer);
  if (errors.length > 0) {
    note(`bench: ${errors.length} system(s) answered with errors:\n${errors.join('\n')}`);
    process.exitCode = 1;
  }
} catch (err) {
  clearInterval(drawTimer);
  note(`bench: FAILED: ${(err as Error).message}`);
  killAll();
  process.exitCode = 1;
}
killAll();
process.exit(process.exitCode ?? 0); // temporary directories go with the exit (lib/procs.ts)
