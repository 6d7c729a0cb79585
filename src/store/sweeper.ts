// Removes rate-limit windows that no longer count (their last bucket is over), so the store
// does not grow with identifiers that stopped calling. Each tick scans at most
// WINDOWS_PER_TICK records of the key windows' table and as many of the limiter's log, each
// in one short write transaction, and continues where it stopped.
import { limiter } from '../engine/native.js';
import type { Logger } from '../log.js';
import { closeBatch } from './durability.js';

export const WINDOWS_PER_TICK = 2000;

export function startWindowSweeper(intervalMs: number, log: Logger): () => void {
  let after: Buffer = Buffer.alloc(0);
  const timer = setInterval(() => {
    try {
      closeBatch();
      const now = Date.now();
      const [next, deleted] = limiter.sweepWindows(after, now, WINDOWS_PER_TICK);
      after = next;
      const [fromLog] = limiter.sweepLog(now, WINDOWS_PER_TICK);
      if (deleted + fromLog > 0) log.debug('swept stale rate-limit windows', { deleted: deleted + fromLog });
    } catch (err) {
      log.warn('window sweep failed', { error: (err as Error).message });
    }
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
