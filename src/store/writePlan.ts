// A write plan for the engine's writeGroups (native/src/groups.rs lays it out and says what
// each op does): the checks and writes of many records, drafted outside a transaction and
// run inside one by a single call (keys.migrateKeys: edits/importKeys.ts).
import { native, type CreditsTuple, type StoreKey } from '../engine/native.js';
import { TABLES, type Table } from '../engine/tables.js';

/** What a group of a plan came to (writeGroups' outcome bytes). */
export const GROUP = { written: 0, present: 1, heldOtherwise: 2 } as const;

const OP = { absent: 1, holds: 2, put: 3, credits: 4 } as const;
const TABLE_ID = new Map<Table, number>(TABLES.map((t, i) => [t, i]));

/** Where records are put: the open transaction (`native`) or a plan. */
export interface Puts {
  put(table: Table, key: StoreKey, value: Buffer): void;
}

export class WritePlan implements Puts {
  private buf = Buffer.allocUnsafe(1 << 16);
  private at = 0;
  /** Where the op count of the group being written is. */
  private countAt = -1;
  private ops = 0;
  /** Groups begun (a group's index among the outcomes is the count before it began). */
  groups = 0;

  /** Begins a group, ending the one before; its index among the outcomes. */
  group(): number {
    this.end();
    this.countAt = this.reserve(2);
    this.ops = 0;
    return this.groups++;
  }

  /** The group goes on only if `key` is not in `table`. */
  absent(table: Table, key: StoreKey): void {
    this.op(OP.absent, table);
    this.key(key);
  }

  /**
   * The group goes on if `key` holds `value` (the ops `create` adds are then skipped), or is
   * absent and `create` adds the ops that write it.
   */
  holds(table: Table, key: StoreKey, value: Buffer, create: () => void): void {
    this.op(OP.holds, table);
    this.key(key);
    this.value(value);
    const thenAt = this.reserve(2);
    const before = this.ops;
    create();
    this.buf.writeUInt16LE(this.ops - before, thenAt);
  }

  put(table: Table, key: StoreKey, value: Buffer): void {
    this.op(OP.put, table);
    this.key(key);
    this.value(value);
  }

  /** Sets the key's balance (as native creditsSet). */
  credits(keyId: string, [remaining, refillAmount, refillDay, lastRefillAtMs]: CreditsTuple): void {
    this.room(1);
    this.buf[this.at++] = OP.credits;
    this.ops++;
    this.key(keyId);
    for (const n of [remaining, refillAmount, refillDay, lastRefillAtMs]) this.buf.writeDoubleLE(n, this.reserve(8));
  }

  /** Runs the plan, inside the caller's transaction (again if it is retried): each group's outcome (GROUP). */
  run(): Buffer {
    this.end();
    return native.writeGroups(this.buf.subarray(0, this.at));
  }

  private end(): void {
    if (this.countAt >= 0) this.buf.writeUInt16LE(this.ops, this.countAt);
  }

  private op(code: number, table: Table): void {
    const id = TABLE_ID.get(table);
    if (id === undefined) throw new RangeError(`no table ${table}`);
    this.room(2);
    this.buf[this.at++] = code;
    this.buf[this.at++] = id;
    this.ops++;
  }

  private key(key: StoreKey): void {
    const lengthAt = this.reserve(2);
    const n = typeof key === 'string' ? this.text(key) : this.bytes(key);
    // The engine refuses keys over 511 bytes; one whose length does not fit cannot be written down.
    if (n > 0xffff) throw new RangeError(`a key of ${n} bytes`);
    this.buf.writeUInt16LE(n, lengthAt);
  }

  private value(value: Buffer): void {
    this.buf.writeUInt32LE(value.length, this.reserve(4));
    this.bytes(value);
  }

  private text(s: string): number {
    this.room(s.length * 3);
    const n = this.buf.write(s, this.at, 'utf8');
    this.at += n;
    return n;
  }

  private bytes(b: Buffer): number {
    this.room(b.length);
    b.copy(this.buf, this.at);
    this.at += b.length;
    return b.length;
  }

  /** Makes room for `n` bytes at the end and skips them: where they start. */
  private reserve(n: number): number {
    this.room(n);
    const at = this.at;
    this.at += n;
    return at;
  }

  private room(n: number): void {
    if (this.at + n <= this.buf.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.at + n));
    this.buf.copy(grown, 0, 0, this.at);
    this.buf = grown;
  }
}
