// What a management write changes, as the cluster's change log carries it: a key of a store
// table (or of the credits, table id CREDITS) and the value it is left with (null: deleted).
// A dry run (native dryRun) yields them with the value each key had before, which PostgreSQL
// compares with its own (kw_commit: a write succeeds only on the state it was computed from);
// the replica applies them here in log order.
//
// Credits travel in two forms: a dry run notes a set as four f64 LE (remaining, refill
// amount, refill day, last refill ms), sent to kw_commit as four int8 big-endian
// (`creditsForCommit`); PostgreSQL publishes the balance as five int8 big-endian, the epoch
// last (schema.ts kw_credits_value), which is what the log and snapshots carry.
import { native } from '../engine/native.js';
import { TABLES, type Table } from '../engine/tables.js';

/** The table id of credits set or deleted (native/src/api/credits.rs CREDITS_WRITES). */
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

/** A record a dry run read and did not write, with the value it read (null: absent). */
export interface Read {
  readonly table: number;
  readonly key: Buffer;
  readonly value: Buffer | null;
}

/** What ends a dry run's writes and starts its reads (native/src/store/dry_run.rs READS). */
const READS = 0xff;

/** The writes and the reads of a dry run (native/src/store/dry_run.rs `encode`). */
export function decodeDryRun(bytes: Buffer): { changes: Change[]; reads: Read[] } {
  const changes: Change[] = [];
  const reads: Read[] = [];
  let at = 0;
  let reading = false;
  const value = (): Buffer | null => {
    const len = bytes.readInt32LE(at);
    at += 4;
    if (len < 0) return null;
    const v = Buffer.from(bytes.subarray(at, at + len));
    at += len;
    return v;
  };
  while (at < bytes.length) {
    if (!reading && bytes.readUInt8(at) === READS) {
      reading = true;
      at++;
      continue;
    }
    const table = bytes.readUInt8(at);
    const keyLength = bytes.readUInt32LE(at + 1);
    const key = Buffer.from(bytes.subarray(at + 5, at + 5 + keyLength));
    at += 5 + keyLength;
    if (reading) {
      reads.push({ table, key, value: value() });
      continue;
    }
    const before = value();
    changes.push({ table, key, before, after: value() });
  }
  return { changes, reads };
}

/** A dry run's credits tuple (four f64 LE) as kw_commit reads it (four int8 big-endian). */
export function creditsForCommit(after: Buffer): Buffer {
  const out = Buffer.alloc(32);
  for (let i = 0; i < 4; i++) out.writeBigInt64BE(BigInt(after.readDoubleLE(i * 8)), i * 8);
  return out;
}

/** The cluster's balance of a key as PostgreSQL publishes it. */
export interface PublishedCredits {
  readonly balance: number;
  readonly refillAmount: number;
  readonly refillDay: number;
  readonly lastRefillAtMs: number;
  readonly epoch: number;
}

export function decodeCredits(value: Buffer): PublishedCredits {
  if (value.length !== 40) throw new Error(`a credits change of ${value.length} bytes (40 expected): this node's build is older than the cluster's`);
  const at = (i: number): number => Number(value.readBigInt64BE(i * 8));
  return { balance: at(0), refillAmount: at(1), refillDay: at(2), lastRefillAtMs: at(3), epoch: at(4) };
}

/** A balance as PostgreSQL publishes it (for `cluster seed`, which writes kw_records itself). */
export function encodeCredits(c: PublishedCredits): Buffer {
  const out = Buffer.alloc(40);
  [c.balance, c.refillAmount, c.refillDay, c.lastRefillAtMs, c.epoch].forEach((v, i) => out.writeBigInt64BE(BigInt(v), i * 8));
  return out;
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
    if (after === null) {
      native.creditsDelete(keyId);
    } else {
      const c = decodeCredits(after);
      native.creditsApply(keyId, c.balance, c.refillAmount, c.refillDay, c.lastRefillAtMs, c.epoch);
    }
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

const REPLICATED_IDS: ReadonlySet<number> = new Set(REPLICATED_TABLES.map((t) => TABLES.indexOf(t)));
const META_ID = TABLES.indexOf('meta');

/** Whether the record `key` of table id `table` is one the cluster replicates (kw_records has it as every replica does). */
export function isReplicated(table: number, key: Buffer): boolean {
  return REPLICATED_IDS.has(table) || (table === META_ID && REPLICATED_META_PREFIXES.some((p) => key.toString('latin1').startsWith(p)));
}
