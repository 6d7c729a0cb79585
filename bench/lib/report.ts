import { diskWriteBytes } from './procStats.js';
import type { WrkResult } from './wrk.js';

export function row(name: string, r: WrkResult): string {
  return `| ${name} | ${Math.round(r.requestsPerSec).toLocaleString('en-US')} | ${r.latencyP50Ms.toFixed(3)} | ${r.latencyP99Ms.toFixed(3)} | ${r.non2xx + r.errors} |`;
}

export const HEADER = '| server / scenario | req/s | p50 ms | p99 ms | non-2xx + socket errors |\n|---|---|---|---|---|';

/** The first argument `npm run bench` does not take (it takes `--full` and `--out DIR`), if any. */
export function unknownSuiteArgument(argv: readonly string[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    if (a === '--full') continue;
    if (a === '--out' && i + 1 < argv.length && !(argv[i + 1] as string).startsWith('--')) {
      i++;
      continue;
    }
    return a;
  }
  return undefined;
}

export function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

/** `--<name> <text>` from the command line, or undefined. */
export function textArg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

/**
 * A measured value as the targets table shows it: two decimals, or three where two would
 * round it to the goal itself, cut toward the side a miss lies on (below a ≥ goal, above a
 * ≤ goal), so the figure shown never reads as meeting a goal the value misses: 2.9986
 * against ≥ 3 is 2.998, not 3.00.
 */
export function targetFigure(value: number, goal: number, atMost: boolean): string {
  if (!Number.isFinite(value)) return '–';
  if (value === goal || value.toFixed(2) !== goal.toFixed(2)) return value.toFixed(2);
  // (± 1e-6: 1.003 * 1000 is 1002.9999999999999 in binary.)
  return ((atMost ? Math.ceil(value * 1000 - 1e-6) : Math.floor(value * 1000 + 1e-6)) / 1000).toFixed(3);
}

/** The median (the mean of the two middle values for an even count; NaN for none). */
export const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
};

/** Seconds of unreported load each system gets before the measured rounds. */
export const WARMUP_S = 2;

export interface Measured {
  name: string;
  /** One wrk run of `durationS` seconds. */
  run: (durationS: number) => WrkResult;
  /** The server's process: its disk writes over the measured rounds are reported. */
  pid?: number;
  /** Every reply is meant to be a refusal (4xx): its 2xx replies are the bad ones. */
  refused?: boolean;
}

/** Replies that are not what `m` measures, and socket errors. */
function badOf(m: Measured, res: WrkResult): number {
  return res.errors + (m.refused === true ? res.requests - res.non2xx : res.non2xx);
}

/** A measurement and the ceiling it is compared with (the same requests, the same generator). */
export interface Pair {
  measured: Measured;
  ceiling: Measured;
}

/**
 * Runs every measurement (the ceilings included, each once per round) `rounds` times,
 * alternating, so that the slow phases of a shared machine hit every system alike, and
 * compares each measurement with its ceiling round by round. Every system first gets a
 * warm-up run of `WARMUP_S` seconds that is not reported (JIT compilation, first touches of
 * the store's pages, TCP buffers), so round 1 measures the same steady state as the others.
 * Returns the report lines: every round, then the medians and the median of the per-round
 * ratios. `bad` counts replies other than those measured (non-2xx, or 2xx for a refusal
 * measurement) and socket errors, warm-up included.
 */
export function alternate(rounds: number, durationS: number, pairs: Pair[]): { lines: string[]; bad: number } {
  const all: Measured[] = [];
  for (const p of pairs) for (const m of [p.measured, p.ceiling]) if (!all.includes(m)) all.push(m);
  const results = new Map<Measured, WrkResult[]>(all.map((m) => [m, []]));
  let bad = 0;
  for (const m of all) {
    process.stderr.write(`warm-up (${WARMUP_S} s, not reported): ${m.name}…\n`);
    bad += badOf(m, m.run(WARMUP_S));
  }
  // Disk writes per measurement with a pid, over its measured rounds (NaN: not readable).
  const written = new Map<Measured, number>();
  for (let r = 0; r < rounds; r++) {
    for (const m of all) {
      process.stderr.write(`round ${r + 1}/${rounds}: ${m.name}…\n`);
      const before = diskWriteBytes(m.pid);
      const res = m.run(durationS);
      const after = diskWriteBytes(m.pid);
      if (m.pid !== undefined) written.set(m, (written.get(m) ?? 0) + (before === undefined || after === undefined ? Number.NaN : after - before));
      bad += badOf(m, res);
      results.get(m)?.push(res);
    }
  }
  const of = (m: Measured): WrkResult[] => results.get(m) as WrkResult[];
  const lines = [HEADER];
  for (let r = 0; r < rounds; r++) for (const m of all) lines.push(row(`${m.name} (round ${r + 1})`, of(m)[r] as WrkResult));
  for (const m of all) {
    const med = (f: (x: WrkResult) => number) => median(of(m).map(f));
    lines.push(row(`**${m.name}, median of ${rounds}**`, { requestsPerSec: med((x) => x.requestsPerSec), latencyP50Ms: med((x) => x.latencyP50Ms), latencyP90Ms: med((x) => x.latencyP90Ms), latencyP99Ms: med((x) => x.latencyP99Ms), requests: 0, non2xx: of(m).reduce((a, x) => a + x.non2xx, 0), errors: of(m).reduce((a, x) => a + x.errors, 0) }));
  }
  for (const { measured, ceiling } of pairs) {
    const ratios = of(measured).map((x, i) => x.requestsPerSec / (of(ceiling)[i] as WrkResult).requestsPerSec);
    lines.push(`ratio ${measured.name} / ${ceiling.name} per round: ${ratios.map((x) => x.toFixed(3)).join(', ')} → median ${median(ratios).toFixed(3)}`);
  }
  for (const [m, bytes] of written) lines.push(diskWriteLine(m.name, bytes, of(m), durationS));
  return { lines, bad };
}

/**
 * What a server wrote to disk over its measured rounds: MB/s and bytes per request
 * (requests = req/s × duration summed over the rounds), from /proc/<pid>/io write_bytes.
 */
export function diskWriteLine(name: string, bytes: number, runs: WrkResult[], durationS: number): string {
  if (Number.isNaN(bytes)) return `disk writes of ${name}: not measured (/proc/<pid>/io cannot be read)`;
  const requests = runs.reduce((a, x) => a + x.requestsPerSec * durationS, 0);
  const seconds = runs.length * durationS;
  return `disk writes of ${name} over its ${runs.length} rounds (/proc/<pid>/io write_bytes, the background fsyncs included): ${(bytes / seconds / 1e6).toFixed(1)} MB/s, ${Math.round(bytes / requests).toLocaleString('en-US')} bytes per request`;
}
