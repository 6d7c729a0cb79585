import type { WrkResult } from './wrk.js';

export function row(name: string, r: WrkResult): string {
  return `| ${name} | ${Math.round(r.requestsPerSec).toLocaleString('en-US')} | ${r.latencyP50Ms.toFixed(3)} | ${r.latencyP99Ms.toFixed(3)} | ${r.non2xx + r.errors} |`;
}

export const HEADER = '| server / scenario | req/s | p50 ms | p99 ms | non-2xx + socket errors |\n|---|---|---|---|---|';

export function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}
