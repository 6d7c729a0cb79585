// bench/lib/report.ts alternate(): a measurement counts the replies it does not measure as
// bad (the single-scenario benches exit non-zero on any), so a refusal scenario that starts
// getting 2xx, or a success scenario that gets refusals, is never reported as measured.
import { describe, expect, it, vi } from 'vitest';
import { alternate } from '../../bench/lib/report.js';
import type { WrkResult } from '../../bench/lib/wrk.js';

const result = (requests: number, non2xx: number, errors = 0): WrkResult => ({ requestsPerSec: requests, latencyP50Ms: 1, latencyP90Ms: 1, latencyP99Ms: 1, requests, non2xx, errors });

function badOf(measured: WrkResult, refused: boolean | undefined): number {
  vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
  try {
    return alternate(2, 1, [{ measured: { name: 'm', run: () => measured, refused }, ceiling: { name: 'c', run: () => result(100, 0) } }]).bad;
  } finally {
    vi.restoreAllMocks();
  }
}

describe('bench alternate: replies other than those measured', () => {
  it('a success measurement counts its non-2xx and socket errors (warm-up and 2 rounds)', () => {
    expect(badOf(result(100, 0), undefined)).toBe(0);
    expect(badOf(result(100, 2, 1), undefined)).toBe(9);
  });

  it('a refusal measurement counts its 2xx replies instead', () => {
    expect(badOf(result(100, 100), true)).toBe(0);
    expect(badOf(result(100, 99), true)).toBe(3);
    expect(badOf(result(100, 100, 1), true)).toBe(3);
  });

  it('reports the per-round ratio to the ceiling', () => {
    vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const { lines } = alternate(2, 1, [{ measured: { name: 'm', run: () => result(50, 50), refused: true }, ceiling: { name: 'c', run: () => result(100, 0) } }]);
    vi.restoreAllMocks();
    expect(lines.at(-1)).toBe('ratio m / c per round: 0.500, 0.500 → median 0.500');
  });
});
