// Work that could block the serving thread for more than about a millisecond runs on a
// piscina pool (DESIGN.md §1): removing the keys of a deleted API, and unlinking the keys of a
// deleted role, identity or permission. One BackgroundJobs per process, built at start-up.
import { Piscina } from 'piscina';
import { fileURLToPath } from 'node:url';
import type { Config } from '../config.js';
import { rebuiltError, type TransportedError } from '../errors/errors.js';
import type { Logger } from '../log.js';
import type { AsyncWriter } from '../store/db.js';
import { purgeBatch, type PurgeTask } from './purgeApi.js';
import { unlinkBatch, type Unlinking } from '../store/cascades.js';

/** What a pool thread needs to open the server's store (the store is process-wide: opening it again is a no-op). */
export type StoreOpening = Pick<Config, 'dataDir' | 'initialMapBytes' | 'writeMap'>;

/** What a module run `elsewhere` returns: its result, or the refusal (an ApiError as data). */
export type PoolReply<T> = { result: T } | { error: TransportedError };

export class BackgroundJobs {
  private pool: Piscina | undefined;
  /** A pool of one thread per module run `elsewhere`, made at its first use. */
  private readonly pools = new Map<string, Piscina>();
  private readonly running = new Set<Promise<unknown>>();

  /**
   * With `config`, jobs run on a worker thread of the pool, which opens the store itself.
   * Without (the store used in-process, e.g. by tests), they run on this thread through
   * `writer`, one batch per loop turn.
   */
  constructor(
    private readonly writer: AsyncWriter,
    private readonly log: Logger,
    private readonly config?: StoreOpening,
  ) {}

  /**
   * Runs the default export of `module` — it opens the store (`task.store`) and commits its
   * own write transaction — on a thread of its own, for a request whose work would hold this
   * thread for many milliseconds (keys.migrateKeys). Resolves with its result once committed,
   * rejects with the ApiError it refused with. Undefined without a pool (the store used
   * in-process, cluster mode): the caller does the work here.
   */
  elsewhere<T>(module: URL, task: object): Promise<T> | undefined {
    if (this.config === undefined) return undefined;
    const { dataDir, initialMapBytes, writeMap } = this.config;
    let pool = this.pools.get(module.href);
    if (pool === undefined) this.pools.set(module.href, (pool = this.newPool(module, 30_000)));
    const job = pool.run({ ...task, store: { dataDir, initialMapBytes, writeMap } }) as Promise<PoolReply<T>>;
    // Shutdown waits for it (drain): a pool stopped inside a transaction would hold the writer.
    const settled = job.catch(() => undefined);
    this.running.add(settled);
    void settled.finally(() => this.running.delete(settled));
    return job.then((reply) => {
      if ('error' in reply) throw rebuiltError(reply.error);
      return reply.result;
    });
  }

  /**
   * A pool of one thread running `module`. A thread that cannot start (no file descriptor or
   * memory left for it) fails the task it was started for, which its caller answers for, and
   * is an 'error' of the pool, which would end the process unheard: it is logged, and the
   * pool starts a thread again for the next task.
   */
  private newPool(module: URL, idleTimeout: number): Piscina {
    const pool = new Piscina({ filename: fileURLToPath(module), maxThreads: 1, idleTimeout });
    pool.on('error', (err: unknown) => this.log.error('a background thread failed; its task failed with it', { module: fileURLToPath(module), error: (err as Error).message }));
    return pool;
  }

  /** Removes a deleted API's keys in the background; resolves with the count removed. */
  purgeApi(apiId: string): Promise<number> {
    return this.run({ apiId }, () => this.writer.transact(() => purgeBatch(apiId)), 'purged the keys of a deleted API', 'purging a deleted API', { apiId });
  }

  /** Unlinks the keys of a deleted role, identity or permission; resolves with the count visited. */
  unlink(unlinking: Unlinking): Promise<number> {
    const what = `a deleted ${unlinking.kind}`;
    return this.run({ unlinking }, () => this.writer.transact(() => unlinkBatch(unlinking, Date.now())), `unlinked the keys of ${what}`, `unlinking the keys of ${what}`, { [`${unlinking.kind}Id`]: unlinking.id });
  }

  private run(work: Pick<PurgeTask, 'apiId' | 'unlinking'>, batch: () => Promise<number>, done: string, failed: string, fields: Record<string, string>): Promise<number> {
    if (this.config === undefined) return onThisThread(batch);
    this.pool ??= this.newPool(new URL('./purgeApi.js', import.meta.url), 5_000);
    const task: PurgeTask = { dataDir: this.config.dataDir, initialMapBytes: this.config.initialMapBytes, writeMap: this.config.writeMap, ...work };
    const job = (this.pool.run(task) as Promise<number>).then(
      (n) => {
        this.log.info(done, { ...fields, keys: n });
        return n;
      },
      (err: unknown) => {
        this.log.error(`${failed} failed; it is retried at the next start`, { ...fields, error: (err as Error).message });
        return 0;
      },
    );
    this.running.add(job);
    void job.finally(() => this.running.delete(job));
    return job;
  }

  /**
   * On shutdown: waits for background work and work run `elsewhere`, at most `timeoutMs`, then stops the pools. A purge
   * cut short loses nothing: its API is marked deleted and the purge resumes at the next start.
   */
  async drain(timeoutMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(this.running), new Promise((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
    clearTimeout(timer);
    await Promise.all([this.pool, ...this.pools.values()].map((p) => p?.destroy()));
    this.pool = undefined;
    this.pools.clear();
  }
}

/**
 * One batch per loop turn. A batch that fails (the store was closed meanwhile) ends the work
 * with what was done: what is left is still marked in the store and resumed at the next
 * start, as after a crash.
 */
async function onThisThread(batch: () => Promise<number>): Promise<number> {
  let total = 0;
  for (;;) {
    await new Promise((resolve) => setImmediate(resolve));
    const n = await batch().catch(() => 0);
    total += n;
    if (n === 0) return total;
  }
}
