// This node's replica of the cluster: its store, fed from the change log in PostgreSQL in
// commit order. A batch of changes is applied in one store transaction that also records how
// far the node has applied (meta `cluster/applied`), so a crash never leaves half a batch or
// a wrong place. LISTEN/NOTIFY on kw_changes wakes it; a poll every `pollMs` is the safety
// net (and how it notices PostgreSQL coming back). A store that is empty, belongs to another
// cluster, or is behind the log's oldest change starts over from a snapshot of kw_records
// taken with the log position it matches.
//
// Several threads (or processes) may keep one store's replica at once: each batch re-reads
// the place inside its transaction and applies only what is past it.
import type { Logger } from '../log.js';
import { native } from '../engine/native.js';
import { TABLES, type Table } from '../engine/tables.js';
import { delRecord, getNumber, getText, putNumber, putText, scanPrefix, type Writer } from '../store/db.js';
import { applyChange, CREDITS, isReplicated, REPLICATED_TABLES } from './changes.js';
import { PostgresUnavailable, type Postgres } from './postgres.js';

const APPLIED = 'cluster/applied';
/** Meta: the id of the cluster this store is a replica of. */
export const CLUSTER_ID = 'cluster/id';
/** Changes fetched and applied per store transaction. */
const BATCH = 5_000;

interface Row {
  seq: string;
  tbl: number;
  key: Buffer;
  value: Buffer | null;
}

export interface ReplicaStatus {
  /** The last change applied to this node's store. */
  appliedSeq: number;
  /** The last change the cluster has, as last seen. */
  headSeq: number;
  /** How long ago this node last had every change it knew of (0 while it has them). */
  lagSeconds: number;
}

export class Replica {
  private applied = 0;
  private head = 0;
  /** Since when this node has been behind (performance.now-free wall clock ms; 0: not behind). */
  private behindSinceMs = 0;
  private running: Promise<void> | undefined;
  private again = false;
  private readonly waiters: { seq: number; resolve: () => void; reject: (err: unknown) => void }[] = [];
  private timer: NodeJS.Timeout | undefined;
  private unlisten: (() => Promise<void>) | undefined;
  private stopped = false;
  /** waitHead's query of the log's head running now, and the one queued after it (headAfterNow). */
  private headQuery: Promise<number> | undefined;
  private nextHeadQuery: Promise<number> | undefined;
  /** PostgreSQL's log head went below this node's place: the next catch-up starts from a snapshot. */
  private behind = false;
  /** Started from this store with PostgreSQL away (startFromStore): the store's place is checked against the cluster at the first tick that reaches it. */
  private unchecked = false;

  constructor(
    private readonly pg: Postgres,
    /** Local transactions on this thread (a serving thread's gated writer). */
    private readonly writer: Writer,
    private readonly log: Logger,
    private readonly pollMs = 1_000,
  ) {}

  status(nowMs: number): ReplicaStatus {
    return { appliedSeq: this.applied, headSeq: Math.max(this.head, this.applied), lagSeconds: this.behindSinceMs === 0 ? 0 : (nowMs - this.behindSinceMs) / 1000 };
  }

  /**
   * Brings the store to the cluster's state (a snapshot first when it needs one), then keeps
   * it there: listens for changes and polls. Rejects when PostgreSQL cannot be reached now,
   * or when the store holds a single-node keyward's data.
   */
  async start(): Promise<void> {
    await this.prepare();
    await this.catchUp();
    await this.listen().catch(() => undefined);
    this.schedule();
  }

  /**
   * PostgreSQL away at start: serves from this store as it is, when it is a replica of a
   * cluster (its place in the log known), and tries PostgreSQL at every poll; once it answers,
   * the store's place is checked (start) and the log applied from there. False when this
   * store is no replica: there is nothing to serve from.
   */
  startFromStore(): boolean {
    const applied = getNumber('meta', APPLIED);
    if (getText('meta', CLUSTER_ID) === undefined || applied === undefined) return false;
    this.applied = applied;
    this.unchecked = true;
    this.log.warn('PostgreSQL is unreachable: serving from this node\'s replica as it is (verifications, limits and reads; writes answer 503) until it is back', { applied });
    this.schedule();
    return true;
  }

  /** Catches up once (for a CLI run): no listening, no polling. */
  async once(): Promise<void> {
    await this.prepare();
    await this.catchUp();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.unlisten?.();
    await this.running?.catch(() => undefined);
    for (const w of this.waiters.splice(0)) w.reject(new PostgresUnavailable('the node is stopping'));
  }

  /** Resolves once this node's store has applied the change `seq` (and all before it). */
  waitApplied(seq: number): Promise<void> {
    if (this.applied >= seq) return Promise.resolve();
    this.head = Math.max(this.head, seq);
    return new Promise((resolve, reject) => {
      this.waiters.push({ seq, resolve, reject });
      this.kick();
    });
  }

  /**
   * Catches up with the log's head as PostgreSQL has it now: read by a query that began
   * after this call did (so every change committed before it is in). Calls that come while
   * such a query runs share the one after it: under many writes at once, one query per
   * round trip rather than one per write.
   */
  async waitHead(): Promise<void> {
    await this.waitApplied(await this.headAfterNow());
  }

  private headAfterNow(): Promise<number> {
    if (this.headQuery === undefined) {
      const query = this.pg.query<{ seq: string }>('SELECT seq FROM kw_head').then((rows) => Number(rows[0]?.seq ?? 0));
      this.headQuery = query.finally(() => {
        this.headQuery = undefined;
      });
      return this.headQuery;
    }
    // The query running began before this call: the next one, shared with every call until it begins.
    this.nextHeadQuery ??= this.headQuery
      .catch(() => undefined)
      .then(() => {
        this.nextHeadQuery = undefined;
        return this.headAfterNow();
      });
    return this.nextHeadQuery;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.tick(), this.pollMs);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    try {
      if (this.unchecked) {
        await this.prepare();
        this.unchecked = false;
        this.log.info('PostgreSQL is reachable: the replica catches up', { applied: this.applied });
      }
      if (this.unlisten === undefined) await this.listen();
      const rows = await this.pg.query<{ seq: string }>('SELECT seq FROM kw_head');
      const head = Number(rows[0]?.seq ?? 0);
      if (head < this.applied) {
        // PostgreSQL lost changes this node applied (a failover to a replica that had not
        // received them, a restore): the log's numbers will be given out again, for other
        // changes, so this node's store is no longer the cluster's.
        this.log.error('the cluster log is behind this node: PostgreSQL lost changes this node had applied; loading a snapshot', { applied: this.applied, head });
        this.behind = true;
      }
      this.head = Math.max(this.head, head);
      if (this.head > this.applied || this.behind) this.kick();
    } catch {
      // PostgreSQL away: the next tick tries again.
    }
    this.schedule();
  }

  private async listen(): Promise<void> {
    this.unlisten = await this.pg.listen(
      'kw_changes',
      (payload) => {
        this.head = Math.max(this.head, Number(payload) || 0);
        this.kick();
      },
      () => (this.unlisten = undefined),
    );
  }

  /** Runs a catch-up now, or once more after the one running. */
  private kick(): void {
    if (this.running !== undefined) {
      this.again = true;
      return;
    }
    this.running = this.catchUp()
      .catch((err: unknown) => {
        if (!(err instanceof PostgresUnavailable)) this.log.error('applying the cluster change log failed', { error: (err as Error).message });
        for (const w of this.waiters.splice(0)) w.reject(err);
      })
      .finally(() => {
        this.running = undefined;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  /** Applies the log past this node's place, batch by batch, until it has the head it knew of. */
  private async catchUp(): Promise<void> {
    if (this.behind) {
      this.behind = false;
      await this.snapshot();
      this.head = this.applied;
    }
    for (;;) {
      const rows = await this.pg.query<Row>('SELECT seq, tbl, key, value FROM kw_changes WHERE seq > $1 ORDER BY seq LIMIT $2', [this.applied, BATCH]);
      const first = rows.length === 0 ? undefined : Number((rows[0] as Row).seq);
      if (first === undefined && !(await this.missing())) break;
      if (first === undefined || first !== this.applied + 1) {
        // The log no longer reaches back to this node's place (it was pruned, or the cluster
        // was seeded from a single node's store without one).
        this.log.warn('the change log no longer has what this node needs next; starting over from a snapshot', { applied: this.applied, oldest: first ?? null });
        await this.snapshot();
        continue;
      }
      this.applied = this.writer.transact(() => {
        const at = getNumber('meta', APPLIED) ?? 0;
        for (const r of rows) if (Number(r.seq) > at) applyChange(r.tbl, r.key, r.value);
        const last = Math.max(at, Number((rows[rows.length - 1] as Row).seq));
        putNumber('meta', APPLIED, last);
        return last;
      });
      this.head = Math.max(this.head, this.applied);
      this.settle();
    }
    this.behindSinceMs = this.applied >= this.head ? 0 : this.behindSinceMs || Date.now();
    this.settle();
  }

  /**
   * Whether the log lacks the change after this node's place though the cluster is past it
   * (the head is read first: every change up to it is committed, so the second query sees
   * it if the log has it).
   */
  private async missing(): Promise<boolean> {
    if (this.head <= this.applied) return false;
    const [head] = await this.pg.query<{ seq: string }>('SELECT seq FROM kw_head');
    if (Number(head?.seq ?? 0) <= this.applied) return false;
    const [next] = await this.pg.query<{ seq: string | null }>('SELECT min(seq) AS seq FROM kw_changes WHERE seq > $1', [this.applied]);
    return next?.seq === null || Number(next?.seq) !== this.applied + 1;
  }

  private settle(): void {
    for (let i = this.waiters.length - 1; i >= 0; i--) {
      const w = this.waiters[i] as (typeof this.waiters)[number];
      if (w.seq <= this.applied) {
        this.waiters.splice(i, 1);
        w.resolve();
      }
    }
  }

  /** Reads this store's place; starts over from a snapshot when it is not this cluster's. */
  private async prepare(): Promise<void> {
    const rows = await this.pg.query<{ id: string }>('SELECT id FROM kw_cluster');
    const clusterId = rows[0]?.id ?? '';
    const mine = getText('meta', CLUSTER_ID);
    if (mine === clusterId && getNumber('meta', APPLIED) !== undefined) {
      this.applied = getNumber('meta', APPLIED) ?? 0;
      return;
    }
    if (mine === undefined && scanPrefix('workspaces', '', undefined, 1).length > 0) {
      throw new Error("this data dir holds a single-node keyward's store: load it into an empty cluster with `keyward cluster seed --data-dir <dir>`, and give this node an empty data dir");
    }
    await this.snapshot();
  }

  /**
   * Makes the replicated records the cluster's, read in one snapshot together with the log
   * position they match: the snapshot (ordered by table and key) is merged with this store's
   * records in the same order, so each is put, and each record the cluster no longer has is
   * deleted, with no moment where a record the cluster has is missing here (a node behind the
   * log goes on serving while it resyncs). The place is removed first, so an interrupted
   * snapshot is started over.
   */
  private async snapshot(): Promise<void> {
    this.writer.transact(() => delRecord('meta', APPLIED));
    const started = Date.now();
    let count = 0;
    let deleted = 0;
    const local = localRecords();
    let next = local.next();
    /** Deletes the local records ordered before (tbl, key), and steps past (tbl, key) itself. */
    const catchUpTo = (tbl: number, key: Buffer | undefined): void => {
      while (!next.done) {
        const [t, k] = next.value;
        const order = t - tbl || (key === undefined ? -1 : Buffer.compare(k, key));
        if (order > 0) return;
        if (order < 0) {
          delRecord(tableOf(t), k);
          deleted++;
        }
        next = local.next();
        if (order === 0) return;
      }
    };
    await this.pg.session(async (q) => {
      await q('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      try {
        const [head] = await q<{ seq: string }>('SELECT seq FROM kw_head');
        const [cluster] = await q<{ id: string }>('SELECT id FROM kw_cluster');
        await q('DECLARE kw_snapshot NO SCROLL CURSOR FOR SELECT tbl, key, value FROM kw_records ORDER BY tbl, key');
        for (;;) {
          const rows = await q<Row>(`FETCH ${BATCH} FROM kw_snapshot`);
          if (rows.length === 0) break;
          this.writer.transact(() =>
            rows.forEach((r) => {
              if (r.tbl !== CREDITS) catchUpTo(r.tbl, r.key);
              applyChange(r.tbl, r.key, r.value);
            }),
          );
          count += rows.length;
        }
        // What is left here, the cluster does not have.
        while (!next.done) this.writer.transact(() => catchUpTo(Number.MAX_SAFE_INTEGER, undefined));
        const seq = Number(head?.seq ?? 0);
        this.writer.transact(() => {
          putText('meta', CLUSTER_ID, cluster?.id ?? '');
          putNumber('meta', APPLIED, seq);
        });
        this.applied = seq;
        await q('COMMIT');
      } catch (err) {
        await q('ROLLBACK').catch(() => undefined);
        throw err;
      }
    });
    this.log.info('replica loaded from a snapshot of the cluster', { records: count, deleted, seq: this.applied, ms: Date.now() - started });
  }
}

const TABLE_IDS: ReadonlyMap<Table, number> = new Map(TABLES.map((t, id) => [t, id]));

function tableOf(id: number): Table {
  return TABLES[id] as Table;
}

/**
 * This store's replicated records, as (table id, key) in the order of kw_records' primary
 * key: by table id, then by key bytes (meta: only its replicated keys). Read in chunks, so
 * records deleted behind the cursor do not disturb it.
 */
function* localRecords(): Generator<[number, Buffer]> {
  const tables = [...REPLICATED_TABLES, 'meta' as const].map((t) => [TABLE_IDS.get(t) as number, t] as const).sort((x, y) => x[0] - y[0]);
  for (const [id, table] of tables) {
    let from: Buffer = Buffer.alloc(0);
    for (;;) {
      const flat = native.range(table, from, null, BATCH + 1);
      const keys = flat.filter((_, i) => i % 2 === 0);
      for (const k of keys.slice(0, BATCH)) if (isReplicated(id, k)) yield [id, k];
      if (keys.length <= BATCH) break;
      from = keys[BATCH] as Buffer;
    }
  }
}
