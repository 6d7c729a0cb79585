// What every handler receives besides its validated input: who is asking, the time (passed
// in, never read), and the thread's services. rpc/dispatch.ts builds one per request.
import type { AnalyticsClient } from '../analytics/host.js';
import type { Principal } from '../auth/permissions.js';
import type { Page } from '../domain/cursor.js';
import type { ClusterCredits } from '../cluster/credits.js';
import type { HotCalls, Outcome, Payment, Served } from '../engine/hotCalls.js';
import type { AsyncWriter } from '../store/db.js';
import type { BackgroundJobs } from '../workers/jobs.js';

export interface Ctx extends AsyncWriter {
  readonly principal: Principal;
  readonly nowMs: number;
  /** Drawn when first asked for. */
  readonly requestId: string;
  /** KEYWARD_VAULT_KEY, for recoverable keys; undefined when not configured. */
  readonly vaultKey: string | undefined;
  /** The engine's hot procedures, through this thread's context buffer. */
  readonly hot: HotCalls;
  /** Cluster mode: this thread's part of the cluster's credits (updateCredits' increments and decrements). */
  readonly credits: ClusterCredits | undefined;
  /**
   * A hot call's reply: its outcome as it is, or — cluster mode, when only the cluster could
   * decide it (a Need) — once the cluster settled the need and `again` made the call again.
   */
  settle(outcome: Outcome, again: (payment?: Payment) => Outcome): Served | Promise<Served>;
  /** Work that runs after the reply (cascades over many keys). */
  readonly jobs: BackgroundJobs;
  /** The analytics worker (KEYWARD_ANALYTICS); undefined: analytics is off. */
  readonly analytics: AnalyticsClient | undefined;
  /**
   * One atomic write transaction (store/db.ts AsyncWriter), resolved once it is committed and
   * this node's store has it. The thread's open batch of hot calls is committed first, and
   * the request is recorded as having written, so its reply waits for what the durability
   * mode promises.
   */
  transact<T>(fn: () => T): Promise<T>;
  /**
   * As `transact`, for a request whose work would hold this thread for many milliseconds:
   * the default export of `module` (an edits/ module) does it on a pool thread, drafting and
   * committing there (workers/jobs.ts `elsewhere`). Undefined where there is no pool (cluster
   * mode, where writes go through PostgreSQL; a store used in-process): the caller transacts.
   */
  transactElsewhere<T>(module: URL, task: object): Promise<T> | undefined;
}

/** What list handlers return; the dispatcher turns it into `data` + `pagination`. */
export type ListResult<T> = Page<T>;
