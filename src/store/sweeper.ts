// Removes rate-limit windows that no longer count (their last bucket is over), so the store
// does not grow with identifiers that stopped calling, and records of the counter log that
// newer ones superseded. Each tick visits at most WINDOWS_PER_TICK records of the log
// (native/src/counterlog.rs) in one short write transaction and continues where it stopped.
import { limiter } from '../engine/native.js';
import type { Logger } from '../log.js';
import { closeBatch } from './durability.js';

export const WINDOWS_PER_TICK = 2000;

export function startWindowSweeper(intervalMs: number, log: Logger): () => void {
  const timer = setInterval(() => {
    try {
      closeBatch();
      const [deleted] = limiter.sweepLog(Date.now(), WINDOWS_PER_TICK);
      if (deleted > 0) log.debug('swept stale rate-limit windows and superseded records', { deleted });
    } catch (err) {
      log.warn('window sweep failed', { error: (err as Error).message });
    }
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
