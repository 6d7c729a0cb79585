// The server's window sweeper (src/store/sweeper.ts) on a backlog of stale windows: it ticks
// every interval, and sooner while its ticks find mostly records to delete. Timers and the
// clock are vitest's fake ones, so the pacing is checked, not the machine's speed.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DurabilityGate } from '../../src/engine/durability.js';
import { native } from '../../src/engine/native.js';
import { createLogger } from '../../src/log.js';
import { direct } from '../../src/store/db.js';
import { ensureNamespace } from '../../src/store/ratelimits.js';
import { BACKLOG_INTERVAL_MS, nextSweepDelay, startWindowSweeper, WINDOWS_PER_TICK } from '../../src/store/sweeper.js';
import { limitCall } from '../helpers/engine.js';
import { inBatch, tempStore } from '../helpers/tempStore.js';

const WS = 'ws_sweeper_test';
const T0 = Date.UTC(2026, 0, 15, 12);
const INTERVAL_MS = 1_000;

tempStore('keyward-sweeper-');
afterEach(() => {
  vi.useRealTimers();
});

function logRecords(): number {
  return native.range('counter_log', '', null, 10_000_000).length / 2;
}

describe('window sweeper', () => {
  it('the next tick comes sooner only after a tick that deleted at least half a full visit and did not reach the end', () => {
    expect(nextSweepDelay(INTERVAL_MS, WINDOWS_PER_TICK, false)).toBe(BACKLOG_INTERVAL_MS);
    expect(nextSweepDelay(INTERVAL_MS, WINDOWS_PER_TICK / 2, false)).toBe(BACKLOG_INTERVAL_MS);
    expect(nextSweepDelay(INTERVAL_MS, WINDOWS_PER_TICK / 2 - 1, false)).toBe(INTERVAL_MS);
    expect(nextSweepDelay(INTERVAL_MS, WINDOWS_PER_TICK, true)).toBe(INTERVAL_MS);
    expect(nextSweepDelay(20, WINDOWS_PER_TICK, false)).toBe(20);
  });

  it('a backlog of 10 ticks of stale windows is gone within 10 backlog intervals after the first tick', () => {
    // 20,000 one-second windows made at T0 in one batch: live then, stale 2 s later.
    const count = 10 * WINDOWS_PER_TICK;
    const ns = direct.transact(() => ensureNamespace(WS, 'sweeper', T0)).id;
    inBatch(() => {
      for (let i = 0; i < count; i++) expect(limitCall(WS, { namespace: ns, identifier: `id_${i}`, limit: 10, duration: 1_000, cost: 1 }, T0).wrote).toBe(true);
    });
    expect(logRecords()).toBeGreaterThanOrEqual(count);
    vi.useFakeTimers({ now: T0 + 60_000 });
    // The serving thread's gate (it turns group commit on: no hot call follows here).
    const stop = startWindowSweeper(INTERVAL_MS, new DurabilityGate('process'), createLogger('silent'));
    try {
      vi.advanceTimersByTime(INTERVAL_MS + 10 * BACKLOG_INTERVAL_MS);
      expect(logRecords()).toBe(0);
    } finally {
      stop();
    }
  });
});
