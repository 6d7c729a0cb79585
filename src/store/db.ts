// Typed access to the native store for management code: msgpack records, ordered scans,
// atomic read-modify-write. No HTTP types here.
import { Packr } from 'msgpackr';
import type { DurabilityGate } from '../engine/durability.js';
import { native, errorCode, type StoreKey } from '../engine/native.js';
import type { Table } from '../engine/tables.js';
import { storageFailure } from '../errors/errors.js';

// Plain maps (no msgpackr record extension), so any msgpack reader, the Rust engine's
// included, decodes what we write. copyBuffers: a binary field is copied out of what was
// read, which may be the shared scratch below.
const packr = new Packr({ useRecords: false, moreTypes: false, mapsAsObjects: true, int64AsType: 'number', copyBuffers: true });

export function encode(value: unknown): Buffer {
  return packr.pack(value);
}

export function decode<T>(buf: Buffer): T {
  return packr.unpack(buf) as T;
}

// Reads land in one scratch Buffer of this thread (native.getInto) instead of a new Buffer per
// value: making a Buffer in native code costs several times the lookup itself. What `read`
// leaves in the scratch is valid until the next read on this thread: decode or copy it first.
let scratch = Buffer.allocUnsafe(64 * 1024);
const NOTHING = Buffer.alloc(0);

/** The value's length, its bytes at the start of `scratch`; -1 when absent. */
function read(table: Table, key: StoreKey): number {
  for (;;) {
    const n = native.getInto(table, key, scratch);
    if (n <= scratch.length) return n;
    // Longer than the scratch (outside a transaction it may change between two reads: read again).
    scratch = Buffer.allocUnsafe(Math.max(n, scratch.length * 2));
  }
}

/** Whether `key` is in `table` (nothing is copied). */
export function has(table: Table, key: StoreKey): boolean {
  return native.getInto(table, key, NOTHING) >= 0;
}

/** The value as a Buffer of its own (kept after later reads), or undefined when absent. */
export function getBytes(table: Table, key: StoreKey): Buffer | undefined {
  const n = read(table, key);
  return n < 0 ? undefined : Buffer.from(scratch.subarray(0, n));
}

export function getRecord<T>(table: Table, key: StoreKey): T | undefined {
  const n = read(table, key);
  // unpack(buffer, end): decoded from the scratch's start, without a view made of it.
  return n < 0 ? undefined : (packr.unpack(scratch, n) as T);
}

/** An 8-byte float value (counters such as the root-key version), undefined when absent. */
export function getNumber(table: Table, key: StoreKey): number | undefined {
  const n = read(table, key);
  if (n < 0) return undefined;
  return n === 8 ? scratch.readDoubleLE(0) : Number(scratch.toString('latin1', 0, n)) || 0;
}

export function putNumber(table: Table, key: StoreKey, value: number): void {
  const buf = Buffer.allocUnsafe(8);
  buf.writeDoubleLE(value, 0);
  native.put(table, key, buf);
}

export function putRecord(table: Table, key: StoreKey, value: unknown): void {
  native.put(table, key, encode(value));
}

export function delRecord(table: Table, key: StoreKey): boolean {
  return native.del(table, key);
}

export function getText(table: Table, key: StoreKey): string | undefined {
  const n = read(table, key);
  return n < 0 ? undefined : scratch.toString('utf8', 0, n);
}

export function putText(table: Table, key: StoreKey, value: string): void {
  native.put(table, key, Buffer.from(value, 'utf8'));
}

/** Entries with `prefix` ≤ key < prefix + U+FFFF… in key order, starting at `from` (inclusive). */
export function scanPrefix(table: Table, prefix: string, from: string | undefined, limit: number): { key: string; value: Buffer }[] {
  const start = from !== undefined && from > prefix ? from : prefix;
  return packedEntries(native.rangePacked(table, start, prefixEnd(prefix), limit)).map(([key, value]) => ({ key: key.toString('utf8'), value }));
}

/**
 * The entries of a rangePacked read, `[u32 LE key length][key][u32 LE value length][value]`
 * each, as views into it: one Buffer made by native per read, not one per key and value
 * (which costs more than most uses of them).
 */
function packedEntries(packed: Buffer): [key: Buffer, value: Buffer][] {
  const out: [Buffer, Buffer][] = [];
  for (let at = 0; at < packed.length; ) {
    const keyEnd = at + 4 + packed.readUInt32LE(at);
    const valueEnd = keyEnd + 4 + packed.readUInt32LE(keyEnd);
    out.push([packed.subarray(at + 4, keyEnd), packed.subarray(keyEnd + 4, valueEnd)]);
    at = valueEnd;
  }
  return out;
}

/** Every entry of `table` in key order, `page` entries per native read (packedEntries). */
export function* tableEntries(table: Table, page: number): Generator<[key: Buffer, value: Buffer]> {
  for (let from: Buffer = Buffer.alloc(0); ; ) {
    const entries = packedEntries(native.rangePacked(table, from, null, page));
    yield* entries;
    const last = entries[entries.length - 1];
    if (entries.length < page || last === undefined) return;
    from = Buffer.concat([last[0], Buffer.from([0])]);
  }
}

/** Every entry under `prefix`, in key order, read a page at a time (callers bound the size by the data model). */
export function scanPrefixAll(table: Table, prefix: string): { key: string; value: Buffer }[] {
  const out: { key: string; value: Buffer }[] = [];
  for (let from: string | undefined; ; ) {
    const page = scanPrefix(table, prefix, from, SCAN_PAGE + 1);
    out.push(...page.slice(0, SCAN_PAGE));
    if (page.length <= SCAN_PAGE) return out;
    from = page[SCAN_PAGE]?.key;
  }
}
const SCAN_PAGE = 1000;

function prefixEnd(prefix: string): Buffer | null {
  if (prefix === '') return null;
  const bytes = Buffer.from(prefix, 'utf8');
  // Increment the last byte that is not 0xff; drop the 0xff tail.
  for (let i = bytes.length - 1; i >= 0; i--) {
    if ((bytes[i] ?? 0) < 0xff) {
      const end = Buffer.from(bytes.subarray(0, i + 1));
      end[i] = (end[i] ?? 0) + 1;
      return end;
    }
  }
  return null;
}

/**
 * Runs write transactions on this thread's store, now: `direct` where no batch of hot calls
 * can be open (the CLI, start-up, background work, tests driving the store by hand), or a
 * serving thread's `gatedWriter`.
 */
export interface Writer {
  /**
   * One atomic write transaction. `fn` may run more than once (the store grew and retried),
   * so it must only read and write the store. Storage failures become a 503 ApiError.
   */
  transact<T>(fn: () => T): T;
}

/**
 * Runs write transactions where the store's truth is, and resolves once one is committed
 * and this node's store has it: a request's context (Ctx) and background jobs write through
 * one. `fn` is as for Writer: it may run more than once.
 */
export interface AsyncWriter {
  transact<T>(fn: () => T): Promise<T>;
}

/** A Writer's transactions as an AsyncWriter's (committed before the promise is made). */
export function settled(writer: Writer): AsyncWriter {
  return {
    transact(fn) {
      try {
        return Promise.resolve(writer.transact(fn));
      } catch (err) {
        return Promise.reject(err);
      }
    },
  };
}

/** Commits `fn` as one transaction on this thread, which must have no batch open. */
function commit<T>(fn: () => T): T {
  try {
    return native.transaction(fn);
  } catch (err) {
    throw asStorageError(err);
  }
}

/** Writes outside the server's serving threads: each transaction committed as it comes. */
export const direct: Writer = { transact: commit };

/**
 * Writes on a serving thread. `grouped` (group commit of management writes): each write is
 * a transaction nested in the thread's batch — the one the turn's hot calls write through,
 * opened if none is — so the writes of one event-loop turn commit together at its end, and
 * the reply of each waits for that commit (DurabilityGate); a write that fails leaves the
 * batch as it was, and the others commit. Otherwise (and for a write too big for the map
 * as it is) the open batch is committed first and the write commits on its own.
 */
export function gatedWriter(gate: Pick<DurabilityGate, 'beforeWrite' | 'openBatch'>, grouped: boolean): Writer {
  return {
    transact(fn) {
      if (grouped) {
        gate.openBatch();
        try {
          return native.transaction(fn);
        } catch (err) {
          if (errorCode(err) !== 'STORE_RETRY_MAP_FULL') throw asStorageError(err);
        }
      }
      gate.beforeWrite();
      return commit(fn);
    },
  };
}

/** A storage failure (not our own ApiError) → 507 insufficient_storage (a full disk) or 503 storage_unavailable; others pass through. */
export function asStorageError(err: unknown): unknown {
  const code = errorCode(err);
  if (code === 'STORE_IO' || code === 'STORE_CLOSED' || code === 'STORE_RETRY_MAP_FULL') return storageFailure('could not complete the write', err);
  return err;
}
