// The TypeScript face of the native module (native/keyward.node, built from native/src).
// Contract (see native/src/lib.rs):
//  - one LMDB environment per process, opened by `open` and shared by every worker thread;
//  - keys are strings (UTF-8) or Buffers of 1..511 bytes, values are opaque Buffers;
//  - `put`/`del` only inside `transaction(fn)`, which commits when fn returns and aborts when
//    it throws. fn may be run more than once (the map grew and the txn was retried), so it
//    must have no effect outside the store;
//  - errors carry a `code`: STORE_CLOSED, STORE_NOT_IN_TXN, STORE_NESTED_TXN,
//    STORE_UNKNOWN_TABLE, STORE_BAD_ARGUMENT, STORE_IO, NATIVE_PANIC.
import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export type Table =
  | 'meta' | 'workspaces' | 'root_keys' | 'root_key_hashes' | 'apis' | 'keys' | 'key_hashes' | 'key_records' | 'api_keys'
  | 'permissions' | 'roles' | 'identities' | 'ratelimit_namespaces' | 'ratelimit_overrides' | 'ratelimit_windows' | 'credits'
  | 'indexes' | 'counter_log';

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

export interface NativeModule {
  /** writeMap (default false): see KEYWARD_WRITE_MAP; falls back to off where the disk space cannot be reserved. */
  open(dir: string, durabilityDisk: boolean, syncIntervalMs: number, initialMapBytes: number, writeMap?: boolean): void;
  close(): void;
  /** Ends the process at once with `code`, skipping Node's teardown (see src/main.ts stop). */
  exitProcess(code: number): never;
  get(table: Table, key: StoreKey): Buffer | undefined;
  /** Copies the value into `target`: its length, −1 when absent, > target.length when it did not fit. */
  getInto(table: Table, key: StoreKey, target: Buffer): number;
  put(table: Table, key: StoreKey, value: Buffer): void;
  del(table: Table, key: StoreKey): boolean;
  /** Ascending `start <= key < end`, at most `limit`, flat `[k0, v0, k1, v1, …]`. */
  range(table: Table, start: StoreKey, end: StoreKey | null, limit: number): Buffer[];
  transaction<T>(fn: () => T): T;
  sync(): void;
  stats(): StoreStats;
  /**
   * Touches every page of the data in use, for at most `budgetMs`, so that serving does not
   * start with page faults that read the disk (native/src/store.rs `warm`); `readBytes` <
   * `usedBytes` when the budget ran out.
   */
  warm(budgetMs: number): { usedBytes: number; readBytes: number };
  /**
   * meta.root_keys_version (0 when absent), cheap to ask per request: read again only when a
   * transaction committed since this thread last read it (native/src/meta.rs).
   */
  rootKeysVersion(): number;
  /**
   * The next id of this thread's request ids (`req_` + 16 alphanumerics), the sequence the
   * hot calls answered from the body bytes draw from too (native/src/reqid.rs).
   */
  requestId(): string;
  sha256Base64(input: StoreKey): string;
  /**
   * Slots of each thread's verification cache (KEYWARD_VERIFY_CACHE; 0 turns it off): key
   * records, and answers that depend on records alone, reused while no record changed
   * (native/src/verified.rs).
   */
  setVerifyCache(slots: number): void;
}

const here = dirname(fileURLToPath(import.meta.url));

function findAddon(): string {
  // src/engine → ../../native (when run from source) or dist/src/engine → ../../../native.
  for (const rel of ['../../native/keyward.node', '../../../native/keyward.node']) {
    const p = join(here, rel);
    if (existsSync(p)) return p;
  }
  throw new Error('native/keyward.node is missing: run `npm run build` (or `npm start`, which builds it)');
}

export const native: NativeModule = createRequire(import.meta.url)(findAddon()) as NativeModule;

export function errorCode(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string' ? err.code : undefined;
}

/**
 * Credits of a key (stored beside the key's rate-limit windows; layout and place owned by
 * native/src/credits.rs).
 * `[remaining, refillAmount, refillDay, lastRefillAtMs]`: refillAmount −1 = no refill,
 * refillDay 0 = daily, 1–31 = monthly on that day (last day of shorter months).
 */
export type CreditsTuple = [remaining: number, refillAmount: number, refillDay: number, lastRefillAtMs: number];

export interface CreditsNative {
  /** The balance as of nowMs, with a due refill applied to the returned view (not stored). */
  creditsGet(keyId: string, nowMs: number): CreditsTuple | undefined;
  /** Inside a transaction: stores the credits record. */
  creditsSet(keyId: string, remaining: number, refillAmount: number, refillDay: number, lastRefillAtMs: number): void;
  /** Inside a transaction: removes the credits record (the key becomes unlimited). */
  creditsDelete(keyId: string): boolean;
}

export const credits = native as unknown as CreditsNative;

export interface VerifyNative {
  /**
   * keys.verifyKey in one native call (native/src/verify.rs). Returns the effect flag ('0'
   * read only, '1' wrote, '2' opened a group-commit batch) followed by the `data` JSON, or
   * by the whole success envelope when `requestId` is given (RawBody). Throws coded errors
   * VERIFY_QUERY_SYNTAX (message says where), VERIFY_UNKNOWN_LIMIT (message = the limit's
   * name), STORE_*.
   */
  verifyKey(workspaceId: string, allowedApis: string, key: string, cost: number, query: string | null, named: string, nowMs: number, requestId?: string): string;
  /**
   * verifyKey read straight from the request body's bytes (native/src/body.rs): the effect
   * flag + the whole success envelope under the next of this thread's request ids (see
   * requestId), or throws as verifyKey; undefined, having read nothing and drawn no id, when
   * the body is not in its plain form.
   */
  verifyKeyBody(workspaceId: string, allowedApis: string, body: Uint8Array, nowMs: number): string | undefined;
}

export const engine = native as unknown as VerifyNative;

export interface LimitNative {
  /** ratelimits.limit (native/src/limit.rs): the effect flag + outcome JSON, or + the whole success envelope with `requestId`. */
  limit(namespaceId: string, identifier: string, limit: number, durationMs: number, cost: number, nowMs: number, requestId?: string): string;
  /**
   * limit read straight from the request body's bytes (native/src/body.rs) when it is in its
   * plain form and names, by name, an existing namespace of the workspace that is in
   * `allowedNamespaces` (the root key's scope: "*" or namespace ids joined by "\n", see
   * Principal.limitScope): the effect flag + the whole success envelope under the next of
   * this thread's request ids (see requestId); else undefined, having changed nothing and
   * drawn no id.
   */
  limitBody(workspaceId: string, allowedNamespaces: string, body: Uint8Array, nowMs: number): string | undefined;
  /** multiLimit, all or nothing: the effect flag + JSON array of outcomes (packing in limit.rs). */
  limitMany(requests: Buffer, nowMs: number): string;
  /** The override that applies to an identifier, as JSON {overrideId, identifier, limit, duration}. */
  findOverride(namespaceId: string, identifier: string): string | undefined;
  /**
   * Visits the next `max` records of the counter log (native/src/counterlog.rs keeps the
   * place) and deletes superseded records and stale windows: [deleted, reached the end].
   */
  sweepLog(nowMs: number, max: number): [number, boolean];
}

export const limiter = native as unknown as LimitNative;
