// What a management write changes, as the cluster's change log carries it: a key of a store
// table (or of the credits, table id CREDITS) and the value it is left with (null: deleted).
// A dry run (native dryRun) yields them with the value each key had before, which PostgreSQL
// compares with its own (kw_commit: a write succeeds only on the state it was computed from);
// the replica applies them here in log order.
import { native } from '../engine/native.js';
import { TABLES, type Table } from '../engine/tables.js';

/** The table id of credits set or deleted (native/src/api/store.rs CREDITS_WRITES). */
export const CREDITS = 100;

export interface Change {
  /** A store table id (engine/tables.ts order) or CREDITS. */
  readonly table: number;
  readonly key: Buffer;
  /** The value before (a dry run's; null: absent). */
  readonly before: Buffer | null;
  /** The value after (null: deleted). */
  readonly after: Buffer | null;
}

/** The writes of a dry run (native/src/store/dry_run.rs `encode`). */
export function decodeWritten(bytes: Buffer): Change[] {
  const out: Change[] = [];
  let at = 0;
  const value = (): Buffer | null => {
    const len = bytes.readInt32LE(at);
    at += 4;
    if (len < 0) return null;
    const v = Buffer.from(bytes.subarray(at, at + len));
    at += len;
    return v;
  };
  while (at < bytes.length) {
    const table = bytes.readUInt8(at);
    const keyLength = bytes.readUInt32LE(at + 1);
    const key = Buffer.from(bytes.subarray(at + 5, at + 5 + keyLength));
    at += 5 + keyLength;
    const before = value();
    out.push({ table, key, before, after: value() });
  }
  return out;
}

/**
 * Whether PostgreSQL takes the write without comparing (credits: each node spends from its
 * own balance until cluster part 2, so the value a node saw is not the cluster's).
 */
export function isBlind(table: number): boolean {
  return table === CREDITS;
}

function tableName(id: number): Table {
  const name = TABLES[id];
  if (name === undefined) throw new Error(`the change log names table ${id}, which this build does not have`);
  return name;
}

/** Applies one change to this node's store, inside the caller's transaction. */
export function applyChange(table: number, key: Buffer, after: Buffer | null): void {
  if (table === CREDITS) {
    const keyId = key.toString('utf8');
    if (after === null) native.creditsDelete(keyId);
    else native.creditsSet(keyId, after.readDoubleLE(0), after.readDoubleLE(8), after.readDoubleLE(16), after.readDoubleLE(24));
    return;
  }
  if (after === null) native.del(tableName(table), key);
  else native.put(tableName(table), key, after);
}

/**
 * The tables whose records the cluster replicates, with the meta keys among them (the other
 * meta keys are this node's own: the counter log's state, the records epoch, the replica's
 * place). The counter log is not replicated (credits come as CREDITS changes).
 */
export const REPLICATED_TABLES: readonly Table[] = TABLES.filter((t) => t !== 'counter_log' && t !== 'meta' && t !== 'credits' && t !== 'ratelimit_windows' && t !== 'key_hashes');
export const REPLICATED_META_PREFIXES: readonly string[] = ['bootstrapped', 'root_keys_version', 'perm_gone/', 'unlink/'];
