// Open-loop HTTP/1.1 load generator (wrk2-style): requests are due on a fixed schedule
// (i / rate seconds after the start) whether or not earlier ones were answered. A due
// request goes out on an idle keep-alive connection, or waits in a queue when every
// connection is busy; its latency is counted from the *scheduled* time, so a server stall
// shows up in the percentiles instead of slowing the generator down (no coordinated
// omission). A second histogram counts from the actual send (service time). An optional
// warm-up runs the schedule first without counting it (`warmupS`).
// The sending is done by bench/native/openloop.c (one C thread sleeping in epoll until the
// next request is due), built to dist/bench/openloop by `scripts/setup.mjs --bench`: a Node
// generator needs more CPU for the same rate on this 2-core machine and its timers fire at
// ~1 ms granularity. This module draws the requests beforehand (the
// `next` callback, up to REQUESTS_DRAWN of them, cycled when a run needs more) and turns
// the samples the generator writes into HdrHistograms.
import { spawn } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as hdr from 'hdr-histogram-js';
import { benchTempDir } from './procs.js';

export const GENERATOR = join(dirname(dirname(fileURLToPath(import.meta.url))), 'openloop');
/**
 * From this rate on the generator runs ticked (openloop.c): it wakes every TICK_US, reads
 * what arrived and sends what is due, instead of waking for every request and every answer.
 * Below it a tick would often find nothing to do, and waking per request costs little.
 */
export const TICK_US = 50;
export const TICKED_FROM_RPS = 1_000_000 / TICK_US;

/** At most this many requests are drawn per run; a longer run sends them again in order. */
export const REQUESTS_DRAWN = 300_000;

export interface OpenLoopRun {
  port: number;
  /** Offered load, requests per second. */
  rate: number;
  durationS: number;
  connections: number;
  /** Builds one complete raw HTTP/1.1 request. */
  next: () => string;
  /** Called about every 250 ms with completed responses so far. */
  onTick?: (completed: number, elapsedS: number) => void;
  /** The generator binary; GENERATOR (built by `scripts/setup.mjs --bench`) by default. */
  generator?: string;
  /** Tick in µs (0: event-driven); TICK_US from TICKED_FROM_RPS on, 0 below, by default. */
  tickUs?: number;
  /**
   * Seconds of the same schedule run first, on the same connections, and not counted
   * (openloop.c); 0 by default. Everything below describes the `durationS` after it.
   */
  warmupS?: number;
}

export interface LatencySummary {
  offeredRps: number;
  /** Requests sent per second of the run (below offeredRps when the generator fell behind). */
  sentRps: number;
  sent: number;
  completedRps: number;
  completed: number;
  non2xx: number;
  errors: number;
  /** Requests still unanswered 5 s after the schedule ended (counted as errors too). */
  timeouts: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  p999Ms: number;
  maxMs: number;
  /** Same percentiles counted from the actual send (hides queueing; for comparison only). */
  serviceP50Ms: number;
  serviceP99Ms: number;
  /** p99 of (actual send − scheduled time) for requests sent on an idle connection: the generator's own timing error. */
  sendLagP99Ms: number;
  /** CPU the generator itself used, in cores (CPU seconds per second of the run). */
  generatorCores: number;
  /** The generator's tick in µs (0: event-driven): up to a tick of each latency is the generator's. */
  tickUs: number;
  /** Seconds run before the measured part and not counted. */
  warmupS: number;
  /** HdrHistogram (µs, from the scheduled time), compressed base64. */
  histogram: string;
}

function newHistogram(): hdr.Histogram {
  return hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 600_000_000, numberOfSignificantValueDigits: 3 });
}

/** The requests of a run, as the generator reads them: u32le count, then (u32le length, bytes) each. */
function requestsFile(run: OpenLoopRun, total: number): Buffer {
  const parts: Buffer[] = [Buffer.alloc(4)];
  const n = Math.min(total, REQUESTS_DRAWN);
  parts[0]!.writeUInt32LE(n);
  for (let i = 0; i < n; i++) {
    const req = Buffer.from(run.next(), 'latin1');
    const len = Buffer.alloc(4);
    len.writeUInt32LE(req.length);
    parts.push(len, req);
  }
  return Buffer.concat(parts);
}

interface GeneratorCounts {
  total: number;
  sent: number;
  sentInWindow: number;
  completed: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  elapsedS: number;
  cpuS: number;
}

function tickOf(run: OpenLoopRun): number {
  return run.tickUs ?? (run.rate >= TICKED_FROM_RPS ? TICK_US : 0);
}

function runGenerator(run: OpenLoopRun, tickUs: number, warmupS: number, requests: string, samples: string): Promise<GeneratorCounts> {
  return new Promise((resolve, reject) => {
    const args = [run.port, run.rate, run.durationS, run.connections].map(String);
    const generator = run.generator ?? GENERATOR;
    const child = spawn(generator, [...args, requests, samples, String(tickUs), String(warmupS)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
      const lines = err.split('\n');
      err = lines.pop() ?? '';
      for (const line of lines) {
        const m = /^tick (\d+) ([\d.]+)$/.exec(line);
        if (m !== null) run.onTick?.(Number(m[1]), Number(m[2]));
        else if (line !== '') err += `${line}\n`;
      }
    });
    child.once('error', (e) => reject(new Error(`the open-loop generator ${generator} could not run (npm run bench builds it): ${e.message}`)));
    child.once('exit', (code) => {
      if (code === 0) resolve(JSON.parse(out) as GeneratorCounts);
      else reject(new Error(`the open-loop generator failed (exit ${code}): ${err.trim()}`));
    });
  });
}

export async function runOpenLoop(run: OpenLoopRun): Promise<LatencySummary> {
  const warmupS = run.warmupS ?? 0;
  const total = Math.round(run.rate * warmupS) + Math.max(1, Math.round(run.rate * run.durationS));
  const tickUs = tickOf(run);
  const dir = benchTempDir('openloop-');
  const requests = join(dir, 'requests');
  const samples = join(dir, 'samples');
  try {
    writeFileSync(requests, requestsFile(run, total));
    const counts = await runGenerator(run, tickUs, warmupS, requests, samples);
    const raw = readFileSync(samples);
    const [nLat, nSvc, nLag] = [0, 1, 2].map((i) => raw.readUInt32LE(i * 4)) as [number, number, number];
    const values = new Uint32Array(raw.buffer, raw.byteOffset + 12, nLat + nSvc + nLag);
    const histogramOf = (from: number, count: number): hdr.Histogram => {
      const h = newHistogram();
      for (let i = from; i < from + count; i++) h.recordValue(values[i] as number);
      return h;
    };
    const hist = histogramOf(0, nLat);
    const service = histogramOf(nLat, nSvc);
    const lag = histogramOf(nLat + nSvc, nLag);
    const ms = (h: hdr.Histogram, p: number): number => h.getValueAtPercentile(p) / 1000;
    const summary: LatencySummary = {
      offeredRps: run.rate,
      sentRps: counts.sentInWindow / run.durationS,
      sent: counts.sent,
      completedRps: counts.completed / counts.elapsedS,
      completed: counts.completed,
      non2xx: counts.non2xx,
      errors: counts.errors + counts.timeouts,
      timeouts: counts.timeouts,
      p50Ms: ms(hist, 50),
      p90Ms: ms(hist, 90),
      p99Ms: ms(hist, 99),
      p999Ms: ms(hist, 99.9),
      maxMs: hist.maxValue / 1000,
      serviceP50Ms: ms(service, 50),
      serviceP99Ms: ms(service, 99),
      sendLagP99Ms: ms(lag, 99),
      generatorCores: counts.cpuS / counts.elapsedS,
      tickUs,
      warmupS,
      histogram: hdr.encodeIntoCompressedBase64(hist),
    };
    hist.destroy();
    service.destroy();
    lag.destroy();
    return summary;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A raw HTTP/1.1 POST with a JSON body. */
export function rawPost(path: string, body: string, authorization: string): string {
  return `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${authorization}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}
