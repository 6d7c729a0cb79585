// Management writes of a cluster node: a write is worked out on this node's replica as a dry
// run (its changes, and what each key held before; and the records it only read, with what
// they held), committed to PostgreSQL in one transaction that takes it only where PostgreSQL
// still holds those values (kw_commit), and
// answered once this node's replica has applied it from the change log (read-your-writes).
// A write worked out on a replica that was behind, or that lost a race with another node's,
// is refused by PostgreSQL as stale: the node catches up and works it out again, and the
// second time it sees what the other node wrote (a name now taken → 409).
import { native } from '../engine/native.js';
import type { DurabilityGate } from '../engine/durability.js';
import type { ApiError } from '../errors/apiError.js';
import { postgresUnavailable } from '../errors/errors.js';
import { asStorageError, type AsyncWriter } from '../store/db.js';
import { CREDITS, creditsForCommit, decodeDryRun, isReplicated, type Change, type Read } from './changes.js';
import { PostgresUnavailable, type Postgres } from './postgres.js';
import type { Replica } from './replica.js';
import { STALE_WRITE } from './schema.js';

/** Attempts at a write that keeps losing races before it is refused (503). */
const ATTEMPTS = 8;
/** How long a committed write may wait for this node to apply it before the reply says so. */
const APPLY_TIMEOUT_MS = 10_000;

/** SQLSTATEs after which a write is worked out again: stale, a deadlock, a serialization failure. */
const RETRY = new Set([STALE_WRITE, '40P01', '40001']);

function sqlState(err: unknown): string {
  return typeof err === 'object' && err !== null && 'code' in err ? String((err as { code: unknown }).code) : '';
}

/**
 * Commits one write's changes to PostgreSQL, where the records it read and did not change
 * (`reads`) still hold what it read; the log sequence number of its last change.
 */
export async function commitChanges(pg: Postgres, node: string, changes: readonly Change[], reads: readonly Read[] = []): Promise<number> {
  // In key order, so two writes lock the rows they share in the same order.
  const byKey = <T extends { table: number; key: Buffer }>(list: readonly T[]): T[] => [...list].sort((a, b) => a.table - b.table || Buffer.compare(a.key, b.key));
  const sorted = byKey(changes);
  // Only what every replica holds as PostgreSQL does: this node's own records (its counter log, its windows) are its alone.
  const read = byKey(reads.filter((r) => isReplicated(r.table, r.key)));
  const rows = await pg.query<{ seq: string }>('SELECT kw_commit($1, $2::smallint[], $3::bytea[], $4::bytea[], $5::bytea[], $6::smallint[], $7::bytea[], $8::bytea[]) AS seq', [
    node,
    sorted.map((c) => c.table),
    sorted.map((c) => c.key),
    sorted.map((c) => c.before),
    sorted.map((c) => (c.table === CREDITS && c.after !== null ? creditsForCommit(c.after) : c.after)),
    read.map((r) => r.table),
    read.map((r) => r.key),
    read.map((r) => r.value),
  ]);
  return Number(rows[0]?.seq ?? 0);
}

/** A write PostgreSQL could not be reached for, before anything of it was committed. */
function unavailable(err: PostgresUnavailable): ApiError {
  return postgresUnavailable(`${err.message}. Nothing was changed; reads and verifications go on from this node's replica`);
}

export class ClusterWriter implements AsyncWriter {
  constructor(
    private readonly pg: Postgres,
    private readonly replica: Replica,
    /** This thread's gate: a dry run is a write transaction, so the open batch is committed first. */
    private readonly gate: Pick<DurabilityGate, 'beforeWrite'> | undefined,
    private readonly node: string,
  ) {}

  async transact<T>(fn: () => T): Promise<T> {
    // Worked out on a replica that has every change PostgreSQL had committed when the call
    // came: what another node wrote and answered before it (an API, a role, an identity
    // deleted; a name freed) is seen here, not only the keys this write changes. Otherwise a
    // key could be created in an API deleted a moment ago (left without its API, a store no
    // node would start on again), or a deleted role taken as there.
    await this.catchUp();
    for (let attempt = 1; ; attempt++) {
      this.gate?.beforeWrite();
      let value: T;
      let written: Buffer;
      try {
        [value, written] = native.dryRun(fn);
      } catch (err) {
        throw asStorageError(err);
      }
      const { changes, reads } = decodeDryRun(written);
      if (changes.length === 0) return value;
      let seq: number;
      try {
        seq = await commitChanges(this.pg, this.node, changes, reads);
      } catch (err) {
        if (err instanceof PostgresUnavailable) throw unavailable(err);
        if (!RETRY.has(sqlState(err)) || attempt >= ATTEMPTS) {
          if (RETRY.has(sqlState(err))) throw postgresUnavailable(`the write kept meeting concurrent writes (${attempt} attempts); nothing was changed, retry it`);
          throw err;
        }
        await this.catchUp();
        continue;
      }
      await this.applied(seq);
      return value;
    }
  }

  /** Waits for this node's replica to apply every change PostgreSQL has committed. */
  private async catchUp(): Promise<void> {
    await this.replica.waitHead().catch((e: unknown) => {
      throw e instanceof PostgresUnavailable ? unavailable(e) : e;
    });
  }

  /** Waits for this node's replica to apply `seq`, at most APPLY_TIMEOUT_MS. */
  private async applied(seq: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(postgresUnavailable(`the write was committed to the cluster (change ${seq}), but this node could not apply it within ${APPLY_TIMEOUT_MS} ms; other nodes have it, and this one will once PostgreSQL is reachable`)), APPLY_TIMEOUT_MS);
    });
    try {
      await Promise.race([this.replica.waitApplied(seq), late]);
    } catch (err) {
      throw err instanceof PostgresUnavailable ? postgresUnavailable(`the write was committed to the cluster (change ${seq}) but this node could not apply it yet: ${err.message}`) : err;
    } finally {
      clearTimeout(timer);
    }
  }
}
