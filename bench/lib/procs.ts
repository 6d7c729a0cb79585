// Starting and stopping the processes a bench measures (keyward, the uWS ceiling).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import { connect, createServer } from 'node:net';

const distBench = dirname(dirname(fileURLToPath(import.meta.url)));
export const MAIN_JS = join(distBench, '..', 'src', 'main.js');

export interface Proc {
  child: ChildProcess;
  port: number;
  stop(): Promise<void>;
}

function waitFor(child: ChildProcess, pattern: RegExp, what: string, timeoutMs = 30_000): Promise<number> {
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => reject(new Error(`${what} did not start in ${timeoutMs / 1000} s: ${err}`)), timeoutMs);
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const m = pattern.exec(out);
      if (m !== null) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    child.stderr?.on('data', (d: Buffer) => {
      err += d.toString();
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited with ${code}: ${err}`));
    });
  });
}

/**
 * A temporary directory removed when the bench exits, however it exits (a store's data
 * file reserves its whole map on disk, so leftovers add up quickly).
 */
const tempDirs: string[] = [];
export function benchTempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
}
function removeTempDirs(): void {
  for (const d of tempDirs.splice(0)) rmSync(d, { recursive: true, force: true });
}

// Every child a bench starts is killed when the bench exits, however it exits.
const children = new Set<ChildProcess>();
function track(child: ChildProcess): ChildProcess {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}
export function killAll(): void {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
}
process.once('exit', () => {
  killAll();
  removeTempDirs();
});
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.once(sig, () => {
    killAll();
    process.exit(130);
  });
}

function stopper(child: ChildProcess): () => Promise<void> {
  return () => new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/**
 * keyward from this checkout, or (`checkout`) from another one's build — an older commit,
 * for an A/B of two builds alternated in one run (`--baseline <dir>` of bench:verify and
 * bench:limit).
 */
export async function startKeyward(env: Record<string, string> = {}, checkout?: string): Promise<Proc & { rootKey: string; dataDir: string }> {
  const dataDir = env.KEYWARD_DATA_DIR ?? benchTempDir('keyward-bench-');
  const rootKey = env.KEYWARD_ROOT_KEY ?? `kwroot_bench_${randomBytes(12).toString('hex')}`;
  const main = checkout === undefined ? MAIN_JS : join(checkout, 'dist', 'src', 'main.js');
  const child = track(spawn(process.execPath, [main], {
    env: { ...process.env, KEYWARD_PORT: '0', KEYWARD_LOG_LEVEL: 'warn', ...env, KEYWARD_DATA_DIR: dataDir, KEYWARD_ROOT_KEY: rootKey },
    stdio: ['ignore', 'pipe', 'pipe'],
  }));
  // A cluster node loading a large snapshot takes a while to listen.
  const port = await waitFor(child, /listening on http:\/\/[^:]+:(\d+)/, 'keyward', env.KEYWARD_POSTGRES_URL === undefined ? 30_000 : 600_000);
  return { child, port, rootKey, dataDir, stop: stopper(child) };
}

/** The ceiling answering every path with a reply of `replyBytes`. */
export function startEcho(replyBytes: number): Promise<Proc> {
  return startCeiling({ default: replyBytes });
}

/** The ceiling server (peers/ceilingServer.ts): reply sizes per path, `default` for the rest. */
export async function startCeiling(replyBytes: Record<string, number>): Promise<Proc> {
  const child = track(spawn(process.execPath, [join(distBench, 'peers', 'ceilingServer.js'), '0', JSON.stringify(replyBytes)], { stdio: ['ignore', 'pipe', 'pipe'] }));
  const port = await waitFor(child, /ceiling listening on (\d+)/, 'uWS ceiling server');
  return { child, port, stop: stopper(child) };
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** Debian's redis-server on a free loopback port, not durable (no RDB snapshots, no AOF). */
export async function startRedis(): Promise<Proc> {
  const port = await freePort();
  const child = await spawnRedis(port, benchTempDir('keyward-bench-redis-'));
  return { child, port, stop: stopper(child) };
}

/** redis-server on `port` (loopback), not durable, its files in `dir`; resolves once it answers. */
export async function spawnRedis(port: number, dir: string): Promise<ChildProcess> {
  const child = track(spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--daemonize', 'no', '--loglevel', 'warning'], { stdio: ['ignore', 'pipe', 'pipe'] }));
  await new Promise<void>((resolve, reject) => {
    child.once('error', (err) => reject(new Error(`redis-server could not be started (${err.message}): install it with apt-get install redis-server (npm run bench installs it when run as root)`)));
    child.once('exit', (code) => reject(new Error(`redis-server exited with ${code} at start`)));
    const deadline = Date.now() + 10_000;
    const probe = (): void => {
      const s = connect({ host: '127.0.0.1', port }, () => {
        s.end('PING\r\n');
        resolve();
      });
      s.once('error', () => {
        s.destroy();
        if (Date.now() > deadline) reject(new Error(`redis-server did not listen on ${port} within 10 s`));
        else setTimeout(probe, 50);
      });
    };
    probe();
  });
  return child;
}

/** A redis-server a test can stop and start again on the same port (fault injection). */
export interface ThrowawayRedis {
  readonly url: string;
  readonly port: number;
  /** Kills it (SIGKILL): its counts are gone, as after a crash. */
  kill(): Promise<void>;
  /** Starts it again on the same port, empty. */
  start(): Promise<void>;
  stop(): Promise<void>;
}

export async function startThrowawayRedis(): Promise<ThrowawayRedis> {
  const port = await freePort();
  const dir = benchTempDir('keyward-redis-');
  let child = await spawnRedis(port, dir);
  const kill = (): Promise<void> =>
    new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGKILL');
    });
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    kill,
    start: async () => {
      child = await spawnRedis(port, dir);
    },
    stop: kill,
  };
}

/** The node:http + Redis peer (peers/redisPeer.ts) in front of Redis at `redisPort`. */
export async function startRedisPeer(redisPort: number, rootKey: string): Promise<Proc> {
  const child = track(spawn(process.execPath, [join(distBench, 'peers', 'redisPeer.js'), '0', String(redisPort), rootKey], { stdio: ['ignore', 'pipe', 'pipe'] }));
  const port = await waitFor(child, /redis peer listening on (\d+)/, 'node:http + Redis peer');
  return { child, port, stop: stopper(child) };
}
