// When a reply may leave (DESIGN.md §1): nothing is acknowledged before it is committed.
//
// One gate per serving thread, built at start-up and passed to what serves requests. Handlers
// and the engine report what a request changed (an Effect); the gate decides when its reply
// may leave:
//  - group commit of the hot procedures: the first verifyKey / limit of an event-loop turn
//    that changes state opens one LMDB write transaction on this thread (Effect.OpenedBatch);
//    the hot calls of that turn read and write through it; the gate commits it at the end of
//    the turn (setImmediate), or earlier when a write transaction needs the writer
//    (`beforeWrite`). The replies that depend on the batch wait for that commit: those of
//    requests that wrote in it, and those whose answer read what it had changed
//    (Effect.ReadUncommitted). If the commit fails, nothing of the batch was applied and they
//    fail (507 or 503). The others (a read that saw nothing the batch changed) leave at
//    once: their answer is the same whatever becomes of the batch.
//  - group commit of management writes (`openBatch`): each is a transaction nested in the
//    batch (opened for it if none is), so a turn's writes, hot and management, share one
//    commit; one that fails is discarded alone.
//  - `process` mode: a reply leaves once its writes are committed (in the OS page cache, which
//    a kill -9 does not lose); the native syncer fsyncs every KEYWARD_SYNC_INTERVAL_MS.
//  - `disk` mode: a reply that follows a write waits for an fsync covering it; one fsync per
//    turn serves every reply queued before it.
import type { Durability } from '../config.js';
import { Effect } from './hotCalls.js';
import { native } from './native.js';

/** A reply that may have to wait: `send` once it may leave, `fail` if what it waited for failed. */
export interface Outgoing {
  send(): void;
  fail(err: unknown): void;
}

export class DurabilityGate {
  private batchOpen = false;
  private batchSeq = 0;
  private readonly failedBatches = new Map<number, unknown>();
  // The waiting replies, with (in parallel) the batch open when each was produced (0: none)
  // and the request's effect.
  private queue: Outgoing[] = [];
  private queueBatches: number[] = [];
  private queueEffects: Effect[] = [];
  private flushScheduled = false;
  private readonly flushNow = (): void => this.flush();

  /** Turns group commit on for the engine: this gate commits the batches. */
  constructor(private readonly mode: Durability) {
    native.setGroupCommit(true);
  }

  /** Before a write transaction on this thread: the open batch is committed first (one writer per thread). */
  beforeWrite(): void {
    this.closeBatch();
  }

  /**
   * Before a management write that nests in this thread's batch (store/db.ts gatedWriter):
   * a batch is opened if none is, and committed at the end of the turn with the hot calls'
   * writes; the request's reply (held as a write) leaves once that commit is done.
   */
  openBatch(): void {
    if (this.batchOpen) return;
    // A batch a hot call of this turn opened, whose reply the gate has not held yet, is adopted as it is.
    native.batchBegin();
    this.adopt();
  }

  /**
   * Sends `reply` once everything its request changed or read (`effect`) is as durable as the
   * mode promises — at once when nothing is pending, or when the request neither wrote nor
   * read what the open batch changed (Effect.None) — or fails it when the commit (or fsync)
   * it waited for failed.
   */
  hold(effect: Effect, reply: Outgoing): void {
    if (effect === Effect.OpenedBatch) {
      this.batchOpen = true;
      this.batchSeq++;
    }
    if (effect === Effect.None || (!this.batchOpen && !(this.mode === 'disk' && effect >= Effect.Wrote))) {
      reply.send();
      return;
    }
    this.queue.push(reply);
    this.queueBatches.push(this.batchOpen ? this.batchSeq : 0);
    this.queueEffects.push(effect);
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(this.flushNow);
    }
  }

  /**
   * The effect of a request answered without an await (its reads and its `hold` in one
   * synchronous run): Effect.None becomes ReadUncommitted when it read what the open batch
   * changed. A hot call reports that itself; this asks the engine for the other requests'.
   */
  readsOf(effect: Effect): Effect {
    if (effect !== Effect.None || !this.batchOpen) return effect;
    return native.takeUncommittedRead() ? Effect.ReadUncommitted : Effect.None;
  }

  /**
   * A hot call made outside the dispatcher's synchronous path (a retry after the cluster
   * settled what it needed) opened a batch: from now the gate commits it, at the end of this
   * turn or before another transaction, as it does one it was told of by `hold`. The call's
   * reply is then held as a write (Effect.Wrote): it leaves once that commit is done.
   */
  adopt(): void {
    this.batchOpen = true;
    this.batchSeq++;
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(this.flushNow);
    }
  }

  /** Commits the open batch, if any (before another transaction, at the end of the turn, on shutdown). */
  closeBatch(): void {
    if (!this.batchOpen) return;
    this.batchOpen = false;
    try {
      native.batchCommit();
    } catch (err) {
      this.failedBatches.set(this.batchSeq, err);
    }
  }

  private flush(): void {
    this.flushScheduled = false;
    this.closeBatch();
    const waiting = this.queue;
    const batches = this.queueBatches;
    const effects = this.queueEffects;
    this.queue = [];
    this.queueBatches = [];
    this.queueEffects = [];
    let syncError: unknown;
    if (this.mode === 'disk' && effects.some((effect) => effect >= Effect.Wrote)) {
      try {
        native.sync();
      } catch (err) {
        syncError = err;
      }
    }
    for (let i = 0; i < waiting.length; i++) {
      const batch = batches[i] as number;
      const effect = effects[i] as Effect;
      const err = (batch === 0 ? undefined : this.failedBatches.get(batch)) ?? (effect >= Effect.Wrote ? syncError : undefined);
      if (err === undefined) (waiting[i] as Outgoing).send();
      else (waiting[i] as Outgoing).fail(err);
    }
    // Only when something failed: clear() replaces the table, and this long-lived Map's table
    // lives in V8's old space, so clearing it every turn filled the old space at request rate
    // and brought a mark-compact (several ms on this thread) every few seconds under load.
    if (this.failedBatches.size > 0) this.failedBatches.clear();
  }
}
