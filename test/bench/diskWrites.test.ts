// The disk writes the benches report for the server (bench/lib/procStats.ts diskWriteBytes and
// ProcSampler, bench/lib/report.ts diskWriteLine).
import { closeSync, fsyncSync, mkdtempSync, openSync, rmSync, statfsSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { diskWriteBytes, ProcSampler } from '../../bench/lib/procStats.js';
import { diskWriteLine } from '../../bench/lib/report.js';
import type { WrkResult } from '../../bench/lib/wrk.js';

const TMPFS_MAGIC = 0x01021994;

describe('disk writes of a process', () => {
  it('counts what the process forced to disk (write + fsync), and nothing for a missing process', () => {
    // Under the checkout rather than the OS temp dir, which may be a tmpfs (no disk writes).
    const dir = mkdtempSync(join(process.cwd(), '.disk-writes-'));
    try {
      const before = diskWriteBytes(process.pid);
      if (before === undefined || statfsSync(dir).type === TMPFS_MAGIC) return; // not measurable here
      const sampler = new ProcSampler([process.pid]);
      const fd = openSync(join(dir, 'f'), 'w');
      const block = Buffer.alloc(1 << 20, 7);
      for (let i = 0; i < 4; i++) writeSync(fd, block);
      fsyncSync(fd);
      closeSync(fd);
      const after = diskWriteBytes(process.pid) as number;
      expect(after - before).toBeGreaterThanOrEqual(4 << 20);
      // The suite's sampler reports the same writes over its run.
      expect(sampler.stop().diskBytes).toBeGreaterThanOrEqual(4 << 20);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(diskWriteBytes(undefined)).toBeUndefined();
    expect(diskWriteBytes(2 ** 22 + 12_345)).toBeUndefined();
  });

  it('reports MB/s over the rounds and bytes per request', () => {
    const run = (requestsPerSec: number): WrkResult => ({ requestsPerSec, latencyP50Ms: 0, latencyP90Ms: 0, latencyP99Ms: 0, requests: 0, non2xx: 0, errors: 0 });
    // 3 rounds of 10 s: 30 s and 1,000 + 2,000 + 3,000 req/s × 10 s = 60,000 requests.
    const line = diskWriteLine('keyward', 60_000_000, [run(1000), run(2000), run(3000)], 10);
    expect(line).toContain('keyward over its 3 rounds');
    expect(line).toContain('2.0 MB/s, 1,000 bytes per request');
    expect(diskWriteLine('keyward', Number.NaN, [run(1)], 10)).toContain('not measured');
  });
});
