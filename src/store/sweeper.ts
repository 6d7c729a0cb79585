// Removes rate-limit windows that no longer count (their last bucket is over), so the store
// does not grow with identifiers that stopped calling, and records of the counter log that
// newer ones superseded. Each tick visits at most WINDOWS_PER_TICK records of the log
// (native/src/counterlog/) in one short write transaction and continues where it stopped.
//
// Under load the hot calls' own commits delete stale windows as they go (native/src/counterlog/gc.rs,
// before_commit); the sweeper is what cleans up once calls stop. When a tick found mostly
// records to delete (a backlog: the end of a burst of new identifiers, a store written
// before the commits did this), the next one comes after BACKLOG_INTERVAL_MS instead of the
// interval, so a backlog of millions goes in minutes, in transactions as short as ever.
import type { DurabilityGate } from '../engine/durability.js';
import { native } from '../engine/native.js';
import type { Logger } from '../log.js';

export const WINDOWS_PER_TICK = 2000;
export const BACKLOG_INTERVAL_MS = 50;

/** The delay before the next tick, after one that deleted `deleted` and did or did not reach the end. */
export function nextSweepDelay(intervalMs: number, deleted: number, atEnd: boolean): number {
  return !atEnd && deleted * 2 >= WINDOWS_PER_TICK ? Math.min(BACKLOG_INTERVAL_MS, intervalMs) : intervalMs;
}

/** Sweeps on this thread, whose open batch of hot calls `gate` commits before each tick's transaction. */
export function startWindowSweeper(intervalMs: number, gate: DurabilityGate, log: Logger): () => void {
  let timer: NodeJS.Timeout | undefined;
  const tick = (): void => {
    let delay = intervalMs;
    try {
      gate.beforeWrite();
      const [deleted, atEnd] = native.sweepLog(Date.now(), WINDOWS_PER_TICK);
      if (deleted > 0) log.debug('swept stale rate-limit windows and superseded records', { deleted });
      delay = nextSweepDelay(intervalMs, deleted, atEnd);
    } catch (err) {
      log.warn('window sweep failed', { error: (err as Error).message });
    }
    timer = setTimeout(tick, delay);
    timer.unref();
  };
  timer = setTimeout(tick, intervalMs);
  timer.unref();
  return () => clearTimeout(timer);
}
