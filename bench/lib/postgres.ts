// A throwaway PostgreSQL for cluster tests and benches: initdb into a temporary directory and
// pg_ctl on a free loopback port, as the `postgres` system user when run as root (initdb
// refuses root), stopped and removed by `stop` (an exit hook stops it too). fsync is off: it
// need only survive its process being killed, not the machine, and commits stay synchronous,
// so a kill loses none. Needs Debian's postgresql (scripts/setup.mjs --test installs it).
import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './procs.js';

export interface ThrowawayPostgres {
  readonly url: string;
  readonly port: number;
  /** Stops the server fast (no shutdown checkpoint), as a crash would; data stays. */
  kill(): void;
  /** Starts it again on the same port and data. */
  start(): void;
  /**
   * Stops (SIGSTOP) or resumes (SIGCONT) the server and its backends: its connections stay
   * open and nothing on them answers, as with a host that hung or a peer gone without a reset.
   */
  pause(paused: boolean): void;
  /** Stops it and removes its directory. */
  stop(): void;
}

/** The newest installed PostgreSQL's bin directory (Debian: /usr/lib/postgresql/<v>/bin). */
export function postgresBin(): string {
  const base = '/usr/lib/postgresql';
  const versions = existsSync(base) ? readdirSync(base).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a)) : [];
  const v = versions.find((x) => existsSync(join(base, x, 'bin', 'initdb')));
  if (v === undefined) throw new Error('PostgreSQL is not installed (Debian package postgresql; scripts/setup.mjs installs it as root)');
  return join(base, v, 'bin');
}

const running = new Set<ThrowawayPostgres>();
process.once('exit', () => running.forEach((pg) => pg.stop()));

export async function startPostgres(): Promise<ThrowawayPostgres> {
  const bin = postgresBin();
  const dir = mkdtempSync(join(tmpdir(), 'keyward-pg-'));
  const asRoot = process.getuid?.() === 0;
  if (asRoot) chownSync(dir, Number(execFileSync('id', ['-u', 'postgres']).toString().trim()), Number(execFileSync('id', ['-g', 'postgres']).toString().trim()));
  const run = (tool: string, args: string[]): void => {
    const command = [join(bin, tool), ...args];
    const res = asRoot ? spawnSync('runuser', ['-u', 'postgres', '--', ...command], { encoding: 'utf8' }) : spawnSync(command[0] as string, command.slice(1), { encoding: 'utf8' });
    if (res.status !== 0) throw new Error(`${tool} failed (${String(res.status)}): ${res.stderr}${res.stdout}`);
  };
  const data = join(dir, 'data');
  run('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--no-sync']);
  const port = await freePort();
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off -c max_connections=200 -c track_functions=pl`;
  const pg: ThrowawayPostgres = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    kill: () => run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']),
    start: () => run('pg_ctl', ['-D', data, '-l', join(dir, 'server.log'), '-o', options, '-w', 'start']),
    pause: (paused) => {
      const postmaster = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
      const backends = spawnSync('pgrep', ['-P', String(postmaster)], { encoding: 'utf8' }).stdout.split('\n').filter((l) => l !== '').map(Number);
      for (const pid of paused ? [postmaster, ...backends] : [...backends, postmaster]) process.kill(pid, paused ? 'SIGSTOP' : 'SIGCONT');
    },
    stop: () => {
      if (!running.delete(pg)) return;
      spawnSync(asRoot ? 'runuser' : join(bin, 'pg_ctl'), asRoot ? ['-u', 'postgres', '--', join(bin, 'pg_ctl'), '-D', data, '-m', 'immediate', '-w', 'stop'] : ['-D', data, '-m', 'immediate', '-w', 'stop']);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  pg.start();
  running.add(pg);
  return pg;
}
