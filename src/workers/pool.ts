// Work that could block the serving thread for more than about a millisecond runs on a
// piscina pool (DESIGN.md §1): removing the keys of a deleted API, and unlinking the keys of a
// deleted role or identity.
import { Piscina } from 'piscina';
import { fileURLToPath } from 'node:url';
import type { Config } from '../config.js';
import type { Logger } from '../log.js';
import { purgeBatch, type PurgeTask } from './purgeApi.js';
import { unlinkBatch, type Unlinking } from '../store/cascades.js';

let pool: Piscina | undefined;
let settings: { config: Config; log: Logger } | undefined;
const running = new Set<Promise<unknown>>();

export function configureWorkers(config: Config, log: Logger): void {
  settings = { config, log };
}

/** Removes a deleted API's keys in the background; resolves with the count removed. */
export function purgeApiInBackground(apiId: string): Promise<number> {
  return inBackground({ apiId }, () => purgeBatch(apiId), 'purged the keys of a deleted API', 'purging a deleted API', { apiId });
}

/** Unlinks the keys of a deleted role or identity in the background; resolves with the count visited. */
export function unlinkInBackground(unlinking: Unlinking): Promise<number> {
  const what = `a deleted ${unlinking.kind}`;
  return inBackground({ unlinking }, () => unlinkBatch(unlinking, Date.now()), `unlinked the keys of ${what}`, `unlinking the keys of ${what}`, { [`${unlinking.kind}Id`]: unlinking.id });
}

function inBackground(work: Pick<PurgeTask, 'apiId' | 'unlinking'>, batch: () => number, done: string, failed: string, fields: Record<string, string>): Promise<number> {
  if (settings === undefined) return onThisThread(batch);
  const { config, log } = settings;
  pool ??= new Piscina({ filename: fileURLToPath(new URL('./purgeApi.js', import.meta.url)), maxThreads: 1, idleTimeout: 5_000 });
  const task: PurgeTask = { dataDir: config.dataDir, initialMapBytes: config.initialMapBytes, writeMap: config.writeMap, ...work };
  const job = (pool.run(task) as Promise<number>).then(
    (n) => {
      log.info(done, { ...fields, keys: n });
      return n;
    },
    (err: unknown) => {
      log.error(`${failed} failed; it is retried at the next start`, { ...fields, error: (err as Error).message });
      return 0;
    },
  );
  running.add(job);
  void job.finally(() => running.delete(job));
  return job;
}

/**
 * Without a pool (the store used in-process, e.g. by tests): one batch per loop turn. A batch
 * that fails (the store was closed meanwhile) ends the work with what was done: what is left
 * is still marked in the store and resumed at the next start, as after a crash.
 */
function onThisThread(batch: () => number): Promise<number> {
  return new Promise((resolve) => {
    let total = 0;
    const step = (): void => {
      let n = 0;
      try {
        n = batch();
      } catch {
        n = 0;
      }
      total += n;
      if (n > 0) setImmediate(step);
      else resolve(total);
    };
    setImmediate(step);
  });
}

/**
 * On shutdown: waits for background work, at most `timeoutMs`, then stops the pool. A purge
 * cut short loses nothing: its API is marked deleted and the purge resumes at the next start.
 */
export async function drainWorkers(timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([Promise.all(running), new Promise((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
  clearTimeout(timer);
  await pool?.destroy();
  pool = undefined;
}
