// A hot call the engine declined because only the cluster can decide it (a Need): its
// windows checked by Redis (windows.ts), its credits settled with PostgreSQL (credits.ts),
// then the call made again, until it answers. The engine asks for one thing at a time:
// windows first (a rate limit is decided before credits), then credits.
import type { DurabilityGate } from '../engine/durability.js';
import { Effect, isNeed, type ClusterNeed, type Outcome, type Payment, type Served } from '../engine/hotCalls.js';
import { clusterBusy } from '../errors/errors.js';
import { Histogram } from '../domain/histogram.js';
import type { ClusterCredits, Obtained } from './credits.js';
import type { ClusterWindows, SyncWindow } from './windows.js';

/** Rounds of a call whose windows' or lease's admissions other calls keep taking first. */
const ATTEMPTS = 8;

export class ClusterCalls {
  /** How long calls waited for the cluster, by what they needed first (this thread's; /metrics). */
  readonly waited = { windows: new Histogram(), credits: new Histogram() };

  constructor(
    readonly credits: ClusterCredits,
    /** Undefined without KEYWARD_REDIS_URL: windows are each node's own. */
    readonly windows: ClusterWindows | undefined,
    /** The serving thread's gate: a retried call's batch becomes its to commit. */
    private readonly gate: Pick<DurabilityGate, 'adopt'> | undefined,
  ) {}

  /**
   * Other requests on this thread may run before the dispatcher holds this reply: a batch the
   * call opened is the gate's to commit from now, and the reply waits for it.
   */
  private adopted(out: Served): Served {
    if (out.effect !== Effect.OpenedBatch) return out;
    this.gate?.adopt();
    return { ...out, effect: Effect.Wrote };
  }

  /** Settles `need` and makes the call again (`again`, with how its credits were paid), until it answers. */
  async settle(need: ClusterNeed, again: (payment?: Payment) => Outcome): Promise<Served> {
    const started = performance.now();
    const waited = need.windows !== undefined ? this.waited.windows : this.waited.credits;
    const synced: SyncWindow[] = [];
    let obtained: Obtained = {};
    try {
      for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
        if (need.windows !== undefined) {
          if (this.windows === undefined) throw new Error('the engine asked Redis to decide a window without KEYWARD_REDIS_URL');
          if (await this.windows.sync(need.windows)) synced.push(...need.windows);
        } else if (need.credits !== undefined) {
          obtained = await this.credits.obtain(need.credits, attempt);
        }
        const out = synced.length > 0 && this.windows !== undefined ? this.windows.afterGrant(() => again(obtained.payment)) : again(obtained.payment);
        if (isNeed(out)) {
          need = out.need;
          continue;
        }
        if (obtained.payment?.paid === true && !out.paidUsed) obtained.unused?.();
        return this.adopted(out);
      }
      // Windows other calls kept taking first, near their limits: decided by this node within
      // its share, as while Redis is away (a bounded answer rather than a 503).
      if (need.windows !== undefined && this.windows !== undefined) {
        const windows = this.windows;
        const out = windows.alone(() => again(obtained.payment));
        if (!isNeed(out)) {
          if (obtained.payment?.paid === true && !out.paidUsed) obtained.unused?.();
          return this.adopted(out);
        }
      }
      if (obtained.payment?.paid === true) obtained.unused?.();
      throw clusterBusy(`the call's ${need.windows !== undefined ? 'rate limits near their limit' : 'credits'} kept being taken by other calls first (${ATTEMPTS} attempts); nothing was counted, retry it`);
    } finally {
      // The buckets this call checked are released (their grants no longer kept for it).
      if (synced.length > 0) this.windows?.release(synced);
      waited.record((performance.now() - started) / 1_000);
    }
  }
}
