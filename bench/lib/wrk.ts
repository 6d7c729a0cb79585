// wrk (Debian) driver: writes a Lua script for one POST request shape, runs wrk, parses
// its summary. wrk is used for peak throughput: a C load generator saturates later than a
// Node one on this 2-core machine.
import { spawn, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { benchTempDir } from './procs.js';

export interface WrkResult {
  requestsPerSec: number;
  latencyP50Ms: number;
  latencyP90Ms: number;
  latencyP99Ms: number;
  /** Requests completed. */
  requests: number;
  non2xx: number;
  errors: number;
}

export interface WrkRun {
  url: string;
  /** A fixed body, or a Lua expression building one per request (see `bodyLua`). */
  body: string;
  /** Lua code run once per wrk thread (e.g. loading keys from a file). */
  initLua?: string;
  /** A Lua expression evaluated per request for the body (overrides `body`). */
  bodyLua?: string;
  /** The body of a Lua `request` function returning wrk.format(...) (overrides `bodyLua`). */
  requestLua?: string;
  headers: Record<string, string>;
  connections: number;
  threads: number;
  durationS: number;
}

function luaString(s: string): string {
  return `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`;
}

function toMs(value: string): number {
  const m = /^([\d.]+)(us|ms|s|m)$/.exec(value.trim());
  if (m === null) return Number.NaN;
  const n = Number(m[1]);
  return m[2] === 'us' ? n / 1000 : m[2] === 'ms' ? n : m[2] === 's' ? n * 1000 : n * 60_000;
}

export function runWrk(run: WrkRun): WrkResult {
  return parseWrk(execWrk(run));
}

function wrkArgs(run: WrkRun): string[] {
  const dir = benchTempDir('keyward-wrk-');
  const script = join(dir, 'request.lua');
  const headerLines = Object.entries(run.headers).map(([k, v]) => `wrk.headers[${luaString(k)}] = ${luaString(v)}`).join('\n');
  const perRequest = run.requestLua !== undefined
    ? `\nrequest = function()\n${run.requestLua}\nend\n`
    : run.bodyLua === undefined ? '' : `\nrequest = function()\n  return wrk.format(nil, nil, nil, ${run.bodyLua})\nend\n`;
  writeFileSync(script, `wrk.method = "POST"\nwrk.body = ${luaString(run.body)}\n${headerLines}\n${run.initLua ?? ''}${perRequest}`);
  return ['-t', String(run.threads), '-c', String(run.connections), '-d', `${run.durationS}s`, '--latency', '-s', script, run.url];
}

/** Runs wrk without blocking the event loop; `onStart` gets wrk's pid (for CPU sampling). */
export function runWrkAsync(run: WrkRun, onStart?: (pid: number) => void): Promise<WrkResult & { output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('wrk', wrkArgs(run), { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.once('error', (e) => reject(new Error(`wrk could not run (${e.message}); install it with apt-get install wrk`)));
    child.once('spawn', () => {
      if (child.pid !== undefined) onStart?.(child.pid);
    });
    child.once('exit', (code) => {
      if (code !== 0) return reject(new Error(`wrk failed (${code}): ${err}`));
      try {
        resolve({ ...parseWrk(out), output: out });
      } catch (e) {
        reject(e as Error);
      }
    });
  });
}

function execWrk(run: WrkRun): string {
  const res = spawnSync('wrk', wrkArgs(run), { encoding: 'utf8' });
  if (res.error) throw new Error(`wrk could not run (${res.error.message}); install it with apt-get install wrk`);
  if (res.status !== 0) throw new Error(`wrk failed: ${res.stderr}`);
  return res.stdout;
}

export function parseWrk(out: string): WrkResult {
  const rps = /Requests\/sec:\s+([\d.]+)/.exec(out);
  const p50 = /\n\s+50%\s+(\S+)/.exec(out);
  const p90 = /\n\s+90%\s+(\S+)/.exec(out);
  const p99 = /\n\s+99%\s+(\S+)/.exec(out);
  const total = /(\d+) requests in/.exec(out);
  const non2xx = /Non-2xx or 3xx responses:\s+(\d+)/.exec(out);
  const errs = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  if (rps === null || p50 === null || p99 === null) throw new Error(`could not parse wrk output:\n${out}`);
  return {
    requestsPerSec: Number(rps[1]),
    latencyP50Ms: toMs(p50[1] ?? ''),
    latencyP90Ms: p90 === null ? Number.NaN : toMs(p90[1] ?? ''),
    latencyP99Ms: toMs(p99[1] ?? ''),
    requests: total === null ? 0 : Number(total[1]),
    non2xx: non2xx === null ? 0 : Number(non2xx[1]),
    errors: errs === null ? 0 : errs.slice(1).reduce((a, b) => a + Number(b), 0),
  };
}

/** Lua for init: loads one string per line of `file` into the global table `items`. */
export function loadLinesLua(file: string): string {
  return `items = {}\nfor line in io.lines(${luaString(file)}) do items[#items + 1] = line end\nmath.randomseed(os.time())\n`;
}
