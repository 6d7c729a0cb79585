// The native store API (native/keyward.node) through its JS boundary: semantics, error
// codes, map growth, durability across reopen, panics, hashing, and concurrency across
// worker threads and processes sharing one LMDB environment.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

/** What `meta` holds in every opened store: the mark of current sids (native/src/migrate.rs),
 * the records epoch its writing bumped, and the tables the store has (native/src/check.rs). */
const META_ENTRIES = 3;

type Key = string | Buffer;

interface NativeStore {
  open(dir: string, durabilityDisk: boolean, syncIntervalMs: number, initialMapBytes: number): void;
  close(): void;
  get(table: string, key: Key): Buffer | undefined;
  getInto(table: string, key: Key, out: Buffer): number;
  put(table: string, key: Key, value: Buffer): void;
  del(table: string, key: Key): boolean;
  range(table: string, start: Key, end: Key | null, limit: number): Buffer[];
  transaction<T>(fn: () => T): T;
  sync(): void;
  stats(): { usedBytes: number; mapBytes: number; pageSize: number; lastTxnId: number; entries: number };
  sha256Base64(input: Key): string;
  rootKeysVersion(): number;
  batchBegin(): void;
  batchCommit(): boolean;
  _panicForTest(): never;
}

const ADDON = fileURLToPath(new URL('../../native/keyward.node', import.meta.url));
const native = createRequire(import.meta.url)(ADDON) as NativeStore;

const KIB = 1024;

/** The error `fn` throws (fails the test if it returns). */
function thrown(fn: () => unknown): Error & { code?: unknown } {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(Error);
    return err as Error & { code?: unknown };
  }
  throw new Error('expected a throw');
}

const codeOf = (fn: () => unknown): unknown => thrown(fn).code;

/** Untyped view, for passing wrong JS types on purpose. */
const loose = native as unknown as Record<string, (...args: unknown[]) => unknown>;

function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n);
  return b;
}

function text(pairs: Buffer[]): string[] {
  return pairs.map((b) => b.toString());
}

let dir = '';

function openStore(initialMapBytes = 0): void {
  native.open(dir, false, 0, initialMapBytes);
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'keyward-engine-'));
});

afterEach(() => {
  native.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('get / put / del / range', () => {
  beforeEach(() => openStore());

  it('stores, reads and deletes; string and Buffer keys are the same bytes', () => {
    expect(native.get('apis', 'a')).toBeUndefined();
    native.transaction(() => native.put('apis', 'é', Buffer.from('v1')));
    expect(native.get('apis', Buffer.from('é'))?.toString()).toBe('v1');
    expect(native.get('keys', 'é')).toBeUndefined();
    expect(native.transaction(() => native.del('apis', 'é'))).toBe(true);
    expect(native.transaction(() => native.del('apis', 'é'))).toBe(false);
    expect(native.get('apis', 'é')).toBeUndefined();
  });

  it('stores empty and binary values unchanged', () => {
    const binary = Buffer.from([0, 255, 1, 0, 128]);
    native.transaction(() => {
      native.put('credits', Buffer.from([0, 1]), binary);
      native.put('credits', 'empty', Buffer.alloc(0));
    });
    expect(native.get('credits', Buffer.from([0, 1]))).toEqual(binary);
    expect(native.get('credits', 'empty')).toEqual(Buffer.alloc(0));
  });

  it('getInto: the length, the bytes copied when they fit, not copied when longer; -1 when absent; presence with an empty Buffer', () => {
    native.transaction(() => {
      native.put('apis', 'five', Buffer.from('12345'));
      native.put('apis', 'none', Buffer.alloc(0));
    });
    const out = Buffer.alloc(8, 0x2e);
    expect(native.getInto('apis', 'five', out)).toBe(5);
    expect(out.toString()).toBe('12345...');
    const short = Buffer.alloc(3, 0x2e);
    expect(native.getInto('apis', Buffer.from('five'), short)).toBe(5);
    expect(short.toString()).toBe('...');
    expect(native.getInto('apis', 'five', Buffer.alloc(0))).toBe(5);
    expect(native.getInto('apis', 'none', Buffer.alloc(0))).toBe(0);
    expect(native.getInto('apis', 'missing', out)).toBe(-1);
    // Inside a transaction: its own writes.
    expect(native.transaction(() => (native.put('apis', 'six', Buffer.from('abcdef')), native.getInto('apis', 'six', out)))).toBe(6);
    expect(out.subarray(0, 6).toString()).toBe('abcdef');
    expect(codeOf(() => loose.getInto?.('apis', 'five', 'not a buffer'))).toBe('STORE_BAD_ARGUMENT');
  });

  it('ranges ascending, start-inclusive, end-exclusive, limited, flat [k, v, …]', () => {
    native.transaction(() => {
      for (const k of ['d', 'b', 'a', 'c', 'ba']) native.put('roles', k, Buffer.from(k.toUpperCase()));
    });
    expect(text(native.range('roles', 'b', 'd', 100))).toEqual(['b', 'B', 'ba', 'BA', 'c', 'C']);
    expect(text(native.range('roles', 'b', null, 100))).toEqual(['b', 'B', 'ba', 'BA', 'c', 'C', 'd', 'D']);
    expect(text(native.range('roles', 'a', null, 2))).toEqual(['a', 'A', 'b', 'B']);
    expect(text(native.range('roles', 'bb', Buffer.from('z'), 1))).toEqual(['c', 'C']);
    expect(native.range('roles', 'a', null, 0)).toEqual([]);
    expect(native.range('roles', 'e', null, 10)).toEqual([]);
    expect(native.range('roles', 'c', 'c', 10)).toEqual([]);
    expect(text(native.range('roles', '', null, Infinity))).toHaveLength(10);
  });

  it('reads inside a transaction see its own writes; fn’s value is returned', () => {
    native.transaction(() => native.put('keys', 'k', Buffer.from('old')));
    const seen = native.transaction(() => {
      native.put('keys', 'k', Buffer.from('new'));
      native.put('keys', 'k2', Buffer.from('x'));
      return { get: native.get('keys', 'k')?.toString(), range: text(native.range('keys', 'k', null, 10)) };
    });
    expect(seen).toEqual({ get: 'new', range: ['k', 'new', 'k2', 'x'] });
    expect(native.get('keys', 'k')?.toString()).toBe('new');
  });

  it('a throwing fn aborts: nothing it wrote remains, and its exception propagates', () => {
    native.transaction(() => native.put('keys', 'k', Buffer.from('kept')));
    const boom = new Error('boom');
    const again = thrown(() =>
      native.transaction(() => {
        native.put('keys', 'k', Buffer.from('changed'));
        native.put('keys', 'other', Buffer.from('x'));
        throw boom;
      }),
    );
    expect(again).toBe(boom);
    expect(native.get('keys', 'k')?.toString()).toBe('kept');
    expect(native.get('keys', 'other')).toBeUndefined();
  });
});

describe('error codes', () => {
  beforeEach(() => openStore());

  it('nested transaction → STORE_NESTED_TXN (and the outer one can still commit)', () => {
    const inner = native.transaction(() => {
      native.put('meta', 'outer', Buffer.from('1'));
      return codeOf(() => native.transaction(() => 1));
    });
    expect(inner).toBe('STORE_NESTED_TXN');
    expect(native.get('meta', 'outer')?.toString()).toBe('1');
  });

  it('put / del outside a transaction → STORE_NOT_IN_TXN', () => {
    expect(codeOf(() => native.put('meta', 'k', Buffer.from('v')))).toBe('STORE_NOT_IN_TXN');
    expect(codeOf(() => native.del('meta', 'k'))).toBe('STORE_NOT_IN_TXN');
  });

  it('unknown table → STORE_UNKNOWN_TABLE', () => {
    expect(codeOf(() => native.get('nope', 'k'))).toBe('STORE_UNKNOWN_TABLE');
    expect(codeOf(() => native.range('', 'a', null, 1))).toBe('STORE_UNKNOWN_TABLE');
    expect(codeOf(() => native.transaction(() => native.put('x'.repeat(100), 'k', Buffer.alloc(1))))).toBe(
      'STORE_UNKNOWN_TABLE',
    );
  });

  it('wrong types, empty and oversized keys → STORE_BAD_ARGUMENT, and the module keeps working', () => {
    const bad: Array<() => unknown> = [
      () => loose.get?.('apis', 42),
      () => loose.get?.('apis', { key: 'a' }),
      () => loose.get?.('apis'),
      () => loose.get?.(7, 'a'),
      () => loose.get?.('apis', ''),
      () => loose.get?.('apis', 'x'.repeat(600)),
      () => loose.get?.('apis', Buffer.alloc(600, 1)),
      () => loose.get?.('apis', 'é'.repeat(256)), // 512 UTF-8 bytes
      () => native.transaction(() => loose.put?.('apis', 'k', 'not a buffer')),
      () => native.transaction(() => loose.put?.('apis', Buffer.alloc(0), Buffer.alloc(1))),
      () => native.transaction(() => loose.del?.('apis', null)),
      () => loose.range?.('apis', 'a', null, -1),
      () => loose.range?.('apis', 'a', 5, 1),
      () => loose.range?.('apis', 'a', null, 'ten'),
      () => loose.transaction?.(123),
      () => loose.open?.(42, false, 0, 0),
      () => loose.open?.(dir, 'yes', 0, 0),
      () => loose.sha256Base64?.(12),
    ];
    for (const call of bad) expect(codeOf(call)).toBe('STORE_BAD_ARGUMENT');
    const maxKey = 'k'.repeat(511);
    native.transaction(() => native.put('apis', maxKey, Buffer.from('ok')));
    expect(native.get('apis', maxKey)?.toString()).toBe('ok');
  });

  it('opening a different directory while open → STORE_BAD_ARGUMENT; the same one is a no-op', () => {
    native.open(dir, true, 50, 0);
    const other = mkdtempSync(join(tmpdir(), 'keyward-engine-other-'));
    try {
      expect(codeOf(() => native.open(other, false, 0, 0))).toBe('STORE_BAD_ARGUMENT');
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });

  it('_panicForTest → NATIVE_PANIC, and the module keeps working', () => {
    const err = thrown(() => native._panicForTest());
    expect(err.code).toBe('NATIVE_PANIC');
    expect(err.message).toContain('_panicForTest');
    native.transaction(() => native.put('meta', 'after-panic', Buffer.from('ok')));
    expect(native.get('meta', 'after-panic')?.toString()).toBe('ok');
  });
});

describe('map growth', () => {
  beforeEach(() => openStore(64 * KIB));

  it('grows from 64 KiB while writing ~4 MB in one transaction (fn is re-run)', () => {
    const value = Buffer.alloc(KIB, 7);
    let runs = 0;
    const result = native.transaction(() => {
      runs++;
      for (let i = 0; i < 4000; i++) native.put('ratelimit_windows', `w-${String(i).padStart(6, '0')}`, value);
      return 'committed';
    });
    expect(result).toBe('committed');
    expect(runs).toBeGreaterThan(1);
    const stats = native.stats();
    expect(stats.mapBytes).toBeGreaterThanOrEqual(4 * 1024 * KIB);
    expect(stats.entries).toBe(4000 + META_ENTRIES);
    expect(native.get('ratelimit_windows', 'w-003999')).toEqual(value);
    expect(native.range('ratelimit_windows', '', null, 10_000)).toHaveLength(8000);
  });

  it('grows across many small transactions', () => {
    const value = Buffer.alloc(2 * KIB, 3);
    for (let i = 0; i < 1500; i++) native.transaction(() => native.put('keys', `k${i}`, value));
    expect(native.stats().entries).toBe(1500 + META_ENTRIES);
    expect(native.stats().mapBytes).toBeGreaterThan(2 * 1024 * KIB);
    expect(native.get('keys', 'k1499')).toEqual(value);
  });

  it('retries even when fn swallows STORE_RETRY_MAP_FULL', () => {
    const codes = new Set<unknown>();
    native.transaction(() => {
      for (let i = 0; i < 2000; i++) {
        try {
          native.put('credits', `c${i}`, Buffer.alloc(KIB, 1));
        } catch (err) {
          codes.add((err as { code?: unknown }).code);
        }
      }
    });
    expect([...codes]).toEqual(['STORE_RETRY_MAP_FULL']);
    expect(native.stats().entries).toBe(2000 + META_ENTRIES);
  });
});

describe('lifecycle and durability', () => {
  it('close is idempotent; afterwards calls throw STORE_CLOSED; data survives reopen', () => {
    openStore(64 * KIB);
    native.transaction(() => {
      for (let i = 0; i < 300; i++) native.put('identities', `id${i}`, Buffer.alloc(600, i % 256));
    });
    native.sync();
    const before = native.stats();
    native.close();
    native.close();
    expect(codeOf(() => native.get('identities', 'id1'))).toBe('STORE_CLOSED');
    expect(codeOf(() => native.transaction(() => 1))).toBe('STORE_CLOSED');
    expect(codeOf(() => native.stats())).toBe('STORE_CLOSED');
    expect(codeOf(() => native.sync())).toBe('STORE_CLOSED');
    openStore(64 * KIB);
    expect(native.get('identities', 'id299')).toEqual(Buffer.alloc(600, 299 % 256));
    const after = native.stats();
    expect(after.entries).toBe(300 + META_ENTRIES);
    expect(after.usedBytes).toBe(before.usedBytes);
    expect(after.lastTxnId).toBe(before.lastTxnId);
    expect(after.pageSize).toBeGreaterThan(0);
  });
});

describe('sha256Base64', () => {
  it('equals node:crypto for strings and Buffers', () => {
    const inputs: Array<string | Buffer> = [
      '',
      'abc',
      'sk_live_0123456789abcdef',
      'ünïcødé ✓ 🔑 键',
      '\ud800 lone surrogate',
      'x'.repeat(253),
      'é'.repeat(2000),
      Buffer.from([0, 1, 2, 255]),
      Buffer.alloc(0),
    ];
    for (const input of inputs) {
      expect(native.sha256Base64(input)).toBe(createHash('sha256').update(input).digest('base64'));
    }
  });
});

describe('rootKeysVersion', () => {
  const f64 = (n: number): Buffer => {
    const b = Buffer.alloc(8);
    b.writeDoubleLE(n);
    return b;
  };
  const bump = (n: number) => native.transaction(() => native.put('meta', 'root_keys_version', f64(n)));

  it('reads the float64 that management code writes, after every commit, and not a rolled-back one', () => {
    openStore();
    expect(native.rootKeysVersion()).toBe(0);
    bump(3);
    expect(native.rootKeysVersion()).toBe(3);
    native.transaction(() => native.put('apis', 'unrelated', Buffer.from('x')));
    expect(native.rootKeysVersion()).toBe(3);
    bump(4);
    expect(native.rootKeysVersion()).toBe(4);
    expect(() =>
      native.transaction(() => {
        native.put('meta', 'root_keys_version', f64(9));
        expect(native.rootKeysVersion()).toBe(9); // inside: the transaction's own view
        throw new Error('roll back');
      }),
    ).toThrow('roll back');
    expect(native.rootKeysVersion()).toBe(4);
  });

  it('is not carried over to another store with the same commit count', () => {
    openStore();
    bump(7);
    expect(native.rootKeysVersion()).toBe(7);
    native.close();
    const other = mkdtempSync(join(tmpdir(), 'keyward-engine-'));
    try {
      native.open(other, false, 0, 0);
      bump(1);
      expect(native.rootKeysVersion()).toBe(1);
      native.close();
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
    openStore();
    expect(native.rootKeysVersion()).toBe(7);
  });

  it("sees another process's bump at once", async () => {
    openStore();
    bump(1);
    expect(native.rootKeysVersion()).toBe(1);
    const code = `const n = require(${JSON.stringify(ADDON)}); n.open(${JSON.stringify(dir)}, false, 0, 0);
      const b = Buffer.alloc(8); b.writeDoubleLE(2); n.transaction(() => n.put('meta', 'root_keys_version', b)); n.close();`;
    const child = spawn(process.execPath, ['-e', code], { stdio: 'ignore' });
    expect(await new Promise((resolve) => child.on('exit', resolve))).toBe(0);
    expect(native.rootKeysVersion()).toBe(2);
  });

  // Inside a turn's batch of hot calls it is kept per snapshot the batch began from.
  it("inside a batch: the batch's snapshot, another process's bump from the next batch on, and the batch's own change", async () => {
    openStore();
    bump(1);
    expect(native.rootKeysVersion()).toBe(1);
    native.batchBegin();
    expect([native.rootKeysVersion(), native.rootKeysVersion()]).toEqual([1, 1]);
    expect(native.batchCommit()).toBe(true);
    const code = `const n = require(${JSON.stringify(ADDON)}); n.open(${JSON.stringify(dir)}, false, 0, 0);
      const b = Buffer.alloc(8); b.writeDoubleLE(2); n.transaction(() => n.put('meta', 'root_keys_version', b)); n.close();`;
    const child = spawn(process.execPath, ['-e', code], { stdio: 'ignore' });
    expect(await new Promise((resolve) => child.on('exit', resolve))).toBe(0);
    native.batchBegin();
    expect(native.rootKeysVersion()).toBe(2);
    native.put('meta', 'root_keys_version', f64(3));
    expect(native.rootKeysVersion()).toBe(3);
    expect(native.batchCommit()).toBe(true);
    expect(native.rootKeysVersion()).toBe(3);
  });
});

describe('concurrency', () => {
  it('two worker threads × 2,000 increments in separate transactions → exactly 4,000', async () => {
    openStore(64 * KIB);
    const worker = new URL('./counterWorker.mjs', import.meta.url);
    const runs = [0, 1].map(
      () =>
        new Promise<void>((resolve, reject) => {
          const w = new Worker(worker, { workerData: { addon: ADDON, dir, iterations: 2000 } });
          let done = false;
          w.on('message', (m) => (done = m === 'done'));
          w.on('error', reject);
          w.on('exit', (code) => (done && code === 0 ? resolve() : reject(new Error(`worker exit ${code}`))));
        }),
    );
    await Promise.all(runs);
    expect(native.get('meta', 'counter')?.readUInt32LE(0)).toBe(4000);
  });

  it('another process writes while this one has the store open; both sets of updates land', async () => {
    openStore(64 * KIB);
    const script = fileURLToPath(new URL('./childWriter.mjs', import.meta.url));
    const child = spawn(process.execPath, [script, ADDON, dir, '1000'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (d: Buffer) => d.toString().includes('ready') && resolve());
      child.on('exit', () => reject(new Error(`child exited before ready: ${stderr}`)));
    });
    for (let i = 0; i < 1000; i++) {
      native.transaction(() => {
        const n = native.get('meta', 'counter')?.readUInt32LE(0) ?? 0;
        native.put('meta', 'counter', u32(n + 1));
      });
    }
    expect(await exited, stderr).toBe(0);
    // The child grew the map past ours (1 MB of padding): reads adopt the new size.
    expect(native.get('apis', 'from-child')?.toString()).toBe(`pid ${child.pid}`);
    expect(native.get('meta', 'counter')?.readUInt32LE(0)).toBe(2000);
    expect(native.stats().entries).toBe(1002 + META_ENTRIES);
    native.transaction(() => native.put('apis', 'after-child', Buffer.from('ok')));
    expect(native.get('apis', 'after-child')?.toString()).toBe('ok');
  });
});
