// The TypeScript face of the native module (native/keyward.node, built from native/src): one
// interface for every export of native/src/lib.rs, checked both ways by
// test/engine/contract.test.ts (EXPORTS below must list exactly the interface's members, and
// lib.rs exactly EXPORTS).
//
// Contract:
//  - one LMDB environment per process, opened by `open` and shared by every worker thread;
//  - store keys are strings (UTF-8) or Buffers of 1..511 bytes, values are opaque Buffers;
//    tables are named by tables.ts's names;
//  - `put`/`del`/`writeGroups`/`creditsSet`/`creditsDelete` only inside `transaction(fn)`, which commits when
//    fn returns and aborts when it throws. fn may be run more than once (the map grew and the
//    txn was retried), so it must have no effect outside the store;
//  - the hot procedures (verifyKey, limit, multiLimit) take the request's JSON bytes and a
//    context in the fixed layout of hotCalls.ts (native/src/context.rs) and return the whole
//    success envelope, their effect written into the context; see hotCalls.ts;
//  - errors carry a `code`: STORE_CLOSED, STORE_NOT_IN_TXN, STORE_NESTED_TXN,
//    STORE_UNKNOWN_TABLE, STORE_BAD_ARGUMENT, STORE_RETRY_MAP_FULL, STORE_IO, STORE_CORRUPT,
//    VERIFY_QUERY_SYNTAX, VERIFY_UNKNOWN_LIMIT, ENGINE_DECLINED, NATIVE_NAPI, NATIVE_PANIC.
import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Table } from './tables.js';

export type StoreKey = string | Buffer;

export interface StoreStats {
  usedBytes: number;
  mapBytes: number;
  pageSize: number;
  lastTxnId: number;
  entries: number;
  /** Commits go through the writable map (disk space for the whole map reserved). */
  writeMap: boolean;
  /** Verifications answered from the verification cache since the process started… */
  verifyCacheHits: number;
  /** …and those of the kind it keeps that were computed in full (not kept yet, or a record changed since). */
  verifyCacheMisses: number;
  /** Verifications computed in full that read the key's record from the cache… */
  verifyCacheRecordHits: number;
  /** …and those that read it from the key table (unknown keys included). */
  verifyCacheRecordMisses: number;
}

/**
 * Credits of a key (stored beside the key's rate-limit windows; layout and place owned by
 * native/src/credits.rs).
 * `[remaining, refillAmount, refillDay, lastRefillAtMs]`: refillAmount −1 = no refill,
 * refillDay 0 = daily, 1–31 = monthly on that day (last day of shorter months).
 */
export type CreditsTuple = [remaining: number, refillAmount: number, refillDay: number, lastRefillAtMs: number];

/**
 * A hot procedure's entry: the request body's JSON bytes and the call's context (hotCalls.ts
 * layout) → the whole success envelope, the effect written into the context; undefined when
 * the call declined the bytes; in cluster mode, the JSON of what only the cluster can decide
 * when the context says so (see hotCalls.ts). `request` and `context` must not share memory.
 */
export type HotEntry = (request: Uint8Array, context: Buffer) => string | undefined;

export interface NativeModule {
  // ── the store ──────────────────────────────────────────────────────────────────────
  /** writeMap (default false): see KEYWARD_WRITE_MAP; falls back to off where the disk space cannot be reserved. */
  open(dir: string, durabilityDisk: boolean, syncIntervalMs: number, initialMapBytes: number, writeMap?: boolean): void;
  close(): void;
  /** The store's table names in id order (native/src/store: its one table list). */
  tables(): string[];
  get(table: Table, key: StoreKey): Buffer | undefined;
  /**
   * The value's length (-1 when absent), copied to the start of `out` when it fits (not
   * copied when longer; an empty `out` asks only whether the key is there). `out` must not
   * be the Buffer `key` is in.
   */
  getInto(table: Table, key: StoreKey, out: Buffer): number;
  put(table: Table, key: StoreKey, value: Buffer): void;
  del(table: Table, key: StoreKey): boolean;
  /**
   * Runs a write plan (src/store/writePlan.ts writes it, native/src/groups.rs lays it out):
   * the checks and writes of many records in one call, one outcome byte per group.
   */
  writeGroups(plan: Buffer): Buffer;
  /** Ascending `start <= key < end`, at most `limit`, flat `[k0, v0, k1, v1, …]`. */
  range(table: Table, start: StoreKey, end: StoreKey | null, limit: number): Buffer[];
  /** What `range` finds in one Buffer, per entry `[u32 LE key length][key][u32 LE value length][value]` (whole-table walks). */
  rangePacked(table: Table, start: StoreKey, end: StoreKey | null, limit: number): Buffer;
  // ── analytics events (native/src/events.rs) ─────────────────────────────────────────
  /** Records an event of every hot call that answers into a buffer of at most `capacityBytes`; 0: off. */
  eventsSet(capacityBytes: number): void;
  /** [recorded, dropped, bytes waiting] since the process started. */
  eventsCounts(): [recorded: number, dropped: number, waitingBytes: number];
  /** The hot calls' decisions since the process started (native/src/decisions.rs): verifications by outcome (every code), limits passed and refused (a multiLimit's limits one each), credits spent. */
  decisionCounts(): DecisionCounts;
  /** The rows of a batch of event lines as the analytics tables keep them (native/src/event_rows.rs). */
  eventsRows(lines: Buffer, dims: number): EventRows;
  /** The rows of every buffered event (the buffer starts again empty). */
  eventsTake(dims: number): EventRows;
  /** A handle to an analytics database's dims (native/src/event_dims.rs), none known yet: each table's next id. */
  eventDimsOpen(nextVerification: number, nextRatelimit: number): number;
  /** Dims the database stored, of table 0 (verifications) or 1 (rate limits): per dim its id (u32 LE), then `fields` fields, each its UTF-8 length (u32 LE) and bytes. */
  eventDimsLearn(dims: number, table: number, fields: number, records: Buffer): void;
  /** Drops the dims the last batch read numbered (its transaction failed). */
  eventDimsForget(dims: number): void;
  eventDimsClose(dims: number): void;
  transaction<T>(fn: () => T): T;
  /**
   * Runs fn as `transaction` does, but never commits: fn's value, and what it wrote (record
   * puts and deletes, each key once with its value before and after; credits set or deleted
   * under table id 100), laid out as native/src/store/dry_run.rs `encode` writes it
   * (src/cluster/changes.ts reads it).
   */
  dryRun<T>(fn: () => T): [T, Buffer];
  /** fsync of the data (mdb_env_sync with force). */
  sync(): void;
  stats(): StoreStats;
  /**
   * Touches every page of the data in use, for at most `budgetMs`, so that serving does not
   * start with page faults that read the disk; `readBytes` < `usedBytes` when the budget ran out.
   */
  warm(budgetMs: number): { usedBytes: number; readBytes: number };
  /**
   * meta.root_keys_version (0 when absent), cheap to ask per request: read again only when a
   * transaction committed since this thread last read it (native/src/meta.rs).
   */
  rootKeysVersion(): number;
  /** The balance as of nowMs, with a due refill applied to the returned view (not stored). */
  creditsGet(keyId: string, nowMs: number): CreditsTuple | undefined;
  /** Inside a transaction: stores the credits record. */
  creditsSet(keyId: string, remaining: number, refillAmount: number, refillDay: number, lastRefillAtMs: number): void;
  /** Inside a transaction: removes the credits record (the key becomes unlimited), and this node's lease of them. */
  creditsDelete(keyId: string): boolean;

  // ── cluster mode: the cluster's balance and this node's leases (native/src/credits.rs Lease)
  /** Inside a transaction: a change of the cluster's balance reached this node; a later epoch voids the lease of the one before. */
  creditsApply(keyId: string, remaining: number, refillAmount: number, refillDay: number, lastRefillAtMs: number, epoch: number): void;
  /**
   * Inside a transaction: PostgreSQL granted this node `granted` in all under `epoch` (a total:
   * one counted already adds nothing) and left the balance at `balance`; `exhausted`: it refused
   * a spend with the balance at 0 and no lease out (the engine then refuses what the lease
   * cannot pay, until a change of the balance arrives). Returns what the lease holds now; −1
   * for a key without credits.
   */
  leaseGrant(keyId: string, epoch: number, granted: number, balance: number, exhausted: boolean): number;
  /** Inside a transaction: takes what is left of the lease to give back: [epoch, returned in all, amount, granted in all]; undefined: no lease. */
  leaseGiveBack(keyId: string): [epoch: number, returned: number, amount: number, granted: number] | undefined;
  /** This node's lease: [remaining, granted, returned, epoch]; undefined: none. */
  leaseGet(keyId: string): [remaining: number, granted: number, returned: number, epoch: number] | undefined;
  /** Keys whose lease went low since the last call (a hint to ask for the next one). */
  leasesLow(): string[];

  // ── cluster mode: rate-limit windows shared through Redis (native/src/shared.rs) ────
  /** The buckets to push or ask Redis for, what they give Redis taken: records `name(16) seq duration pending returned` (i64 LE), 48 bytes each. */
  windowsDrain(nowMs: number): Buffer;
  /** For sync checks: this node's pending counts of a call's buckets `name(16) seq duration cost` (40 bytes each), taken: one i64 LE each; each bucket is released once the call answered. */
  windowsTake(records: Buffer): Buffer;
  /** What Redis said at `atMs` (what the engine knows is fresh for a while after): records `name(16) seq duration others othersPrevious admitted` (i64 LE), 56 bytes each. */
  windowsLearn(records: Buffer, atMs: number): void;
  /** The buckets a call checked (windowsTake's records), released once it answered. */
  windowsRelease(records: Buffer): void;
  /** The override that applies to an identifier (exact, else the longest matching pattern), as JSON {overrideId, identifier, limit, duration}. */
  findOverride(namespaceId: string, identifier: string): string | undefined;
  /**
   * Visits the next `max` records of the counter log (native/src/counterlog/ keeps the
   * place) and deletes superseded records and stale windows: [deleted, reached the end].
   */
  sweepLog(nowMs: number, max: number): [number, boolean];

  // ── the hot procedures (hotCalls.ts) ──────────────────────────────────────────────────
  /** keys.verifyKey (native/src/verify.rs). Throws VERIFY_QUERY_SYNTAX (message says where), VERIFY_UNKNOWN_LIMIT (message = the limit's name). */
  verifyKey: HotEntry;
  /** ratelimits.limit (native/src/limit.rs); declines a namespace the workspace lacks or the scope excludes. */
  limit: HotEntry;
  /** ratelimits.multiLimit, all or nothing; declines as limit does. */
  multiLimit: HotEntry;
  /** The bounds the hot calls' body readers check, as JSON (see bounds.ts). */
  hotBounds(): string;
  /** Group commit on this process (the server): a hot call that writes outside a batch opens one (Effect.OpenedBatch), committed by batchCommit. */
  setGroupCommit(on: boolean): void;
  /** Opens this thread's batch (a management write nests in it, DurabilityGate.openBatch); false when one is open already. */
  batchBegin(): boolean;
  /** Commits this thread's open batch; false when none was open. On failure nothing of the batch was committed. */
  batchCommit(): boolean;
  /**
   * Whether this thread read what its open batch changed (a counter the batch wrote, or any
   * record once the batch changed one) since the batch began, the last take or the last hot
   * call (which reports it as Effect.ReadUncommitted); clears it.
   */
  takeUncommittedRead(): boolean;
  /**
   * Slots of each thread's verification cache (KEYWARD_VERIFY_CACHE; 0 turns it off): key
   * records, and answers that depend on records alone, reused while no record changed
   * (native/src/verified.rs).
   */
  setVerifyCache(slots: number): void;

  // ── utilities ───────────────────────────────────────────────────────────────────────
  /**
   * The next id of this thread's request ids (`req_` + 16 alphanumerics), the sequence the hot
   * calls draw theirs from too (native/src/reqid.rs).
   */
  requestId(): string;
  sha256Base64(input: StoreKey): string;
  /** Fills `target` with cryptographically secure random bytes (the kernel's CSPRNG). */
  fillRandom(target: Uint8Array): void;
  /**
   * The integrity of the data file in `dir`, walked page by page without LMDB (so a damaged
   * page is reported, not an abort): a JSON `StoreCheck`. budgetMs 0: the whole store.
   */
  checkStore(dir: string, budgetMs: number): string;
  /** Whether another process has the store in `dir` open (LMDB's lock on lock.mdb). */
  storeInUse(dir: string): boolean;
  /** A compacted copy of the open store into the empty directory `dir` (writers go on); the last transaction id before it began. */
  backup(dir: string): number;
  /** Raises the process's soft limit of open descriptors to its hard limit (best effort): the limits in force then. */
  raiseFileLimit(): [soft: number, hard: number];
  /** Ends the process at once with `code`, skipping Node's teardown (see src/main.ts stop). */
  exitProcess(code: number): never;
  /** The calling thread's id (gettid). */
  threadId(): number;
  /**
   * The ids of the threads of libuv's pool (Node's, shared by the whole process): `threads`
   * jobs, each holding its thread until all have started. Blocks for 2 s at most.
   */
  poolThreadIds(threads: number): number[];
  /**
   * Hands thread `tid` to the analytics priority governor (native/src/priority.rs): SCHED_IDLE
   * while no query runs and events wait less than a second, normal priority otherwise. False,
   * and nothing done, where the process may not take a thread back up from SCHED_IDLE.
   */
  governAnalytics(tid: number): boolean;
  /** +1 when an analytics query starts (the governed threads go to normal priority at once), -1 when it ends. */
  analyticsQueries(delta: 1 | -1): void;
  /** Whether the governed analytics threads run at SCHED_IDLE now. */
  analyticsIdle(): boolean;
  /** Panics inside the boundary: proves a panic becomes a NATIVE_PANIC exception. */
  _panicForTest(): never;
}

/** decisionCounts' answer. */
export interface DecisionCounts {
  /** keys.verifyKey answers by code. */
  outcomes: Record<string, number>;
  passed: number;
  refused: number;
  creditsSpent: number;
}

/** One analytics table's rows: one text per column (native/src/event_rows.rs orders them), its values separated by line feeds; bit i of `escaped` is set when column i holds escapes. */
export interface EventColumns {
  columns: string[];
  rows: number;
  escaped: number;
  /** The fields of the dims the batch numbered (native/src/event_rows.rs), one dim's after another, and their ids. */
  dims: string[];
  dimIds: number[];
}

/** Analytics events as rows: verifications and rate-limit decisions, lines that gave none, and the earliest time of a row (Infinity: none). */
export interface EventRows {
  verifications: EventColumns;
  ratelimits: EventColumns;
  unread: number;
  minTimeMs: number;
}

/** Every member of NativeModule, once: the compiler refuses a missing or an extra one. */
const EXPORTS: { readonly [K in keyof NativeModule]-?: true } = {
  open: true, close: true, tables: true, get: true, getInto: true, put: true, del: true, writeGroups: true, range: true, rangePacked: true, eventsSet: true, eventsCounts: true, decisionCounts: true, eventsRows: true, eventsTake: true, eventDimsOpen: true, eventDimsLearn: true, eventDimsForget: true, eventDimsClose: true, transaction: true, dryRun: true,
  sync: true, stats: true, warm: true, rootKeysVersion: true, creditsGet: true, creditsSet: true, creditsDelete: true,
  creditsApply: true, leaseGrant: true, leaseGiveBack: true, leaseGet: true, leasesLow: true, windowsDrain: true, windowsTake: true, windowsLearn: true, windowsRelease: true,
  findOverride: true, sweepLog: true, verifyKey: true, limit: true, multiLimit: true, hotBounds: true, setGroupCommit: true,
  batchBegin: true, batchCommit: true, takeUncommittedRead: true, setVerifyCache: true, requestId: true, sha256Base64: true, fillRandom: true,
  raiseFileLimit: true, checkStore: true, storeInUse: true, backup: true, exitProcess: true,
  threadId: true, poolThreadIds: true, governAnalytics: true, analyticsQueries: true, analyticsIdle: true, _panicForTest: true,
};

export const EXPORT_NAMES = Object.keys(EXPORTS) as readonly (keyof NativeModule)[];

const here = dirname(fileURLToPath(import.meta.url));

function findAddon(): string {
  // src/engine → ../../native (when run from source) or dist/src/engine → ../../../native.
  for (const rel of ['../../native/keyward.node', '../../../native/keyward.node']) {
    const p = join(here, rel);
    if (existsSync(p)) return p;
  }
  throw new Error('native/keyward.node is missing: run `npm run build` (or `npm start`, which builds it)');
}

/** Whether `addon` has every export of the contract (a stale build does not): the missing ones. */
function missingExports(addon: unknown): (keyof NativeModule)[] {
  if (typeof addon !== 'object' || addon === null) return [...EXPORT_NAMES];
  return EXPORT_NAMES.filter((name) => typeof Reflect.get(addon, name) !== 'function');
}

function isNativeModule(addon: unknown): addon is NativeModule {
  return missingExports(addon).length === 0;
}

function load(): NativeModule {
  const addon: unknown = createRequire(import.meta.url)(findAddon());
  if (!isNativeModule(addon)) throw new Error(`native/keyward.node lacks ${missingExports(addon).join(', ')}: it is older than src/engine/native.ts; rebuild it with \`npm run build\``);
  return addon;
}

export const native: NativeModule = load();

export function errorCode(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string' ? err.code : undefined;
}
