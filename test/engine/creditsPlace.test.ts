// Where credits live (native/src/credits.rs): counters of the counter log, beside the
// rate-limit windows, so the sweeper must leave them alone however old they are. (The
// upgrades from older layouts are in migrate.test.ts.)
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

interface Native {
  open(dir: string, durabilityDisk: boolean, syncIntervalMs: number, initialMapBytes: number): void;
  close(): void;
  get(table: string, key: string | Buffer): Buffer | undefined;
  put(table: string, key: string | Buffer, value: Buffer): void;
  del(table: string, key: string | Buffer): boolean;
  range(table: string, start: string | Buffer, end: string | Buffer | null, limit: number): Buffer[];
  transaction<T>(body: () => T): T;
  creditsGet(keyId: string, nowMs: number): [number, number, number, number] | undefined;
  creditsSet(keyId: string, remaining: number, refillAmount: number, refillDay: number, lastRefillAtMs: number): void;
  creditsDelete(keyId: string): boolean;
  sweepLog(nowMs: number, max: number): [number, boolean];
}

const native = createRequire(import.meta.url)('../../native/keyward.node') as Native;
const T0 = Date.UTC(2026, 0, 15, 12);
const YEAR = 365 * 86_400_000;

let dir: string | undefined;
function openFresh(): string {
  dir = mkdtempSync(join(tmpdir(), 'keyward-credits-place-'));
  native.open(dir, false, 0, 0);
  return dir;
}
afterEach(() => {
  native.close();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('credits records', () => {
  it('survive the sweeper, which still removes the stale windows around them', () => {
    const at = openFresh();
    // A key window written by an older keyward (ratelimit_windows at k/<keyId>/<name>; moved
    // into the counter log when the store is opened): 1,000 ms long, last used in bucket 0.
    const window = Buffer.alloc(32);
    window.writeBigInt64LE(1_000n, 0);
    native.transaction(() => native.put('ratelimit_windows', 'k/key_a/requests', window));
    native.close();
    native.open(at, false, 0, 0);
    native.transaction(() => {
      native.creditsSet('key_a', 7, -1, 0, T0);
      native.creditsSet('key_b', 9, 100, 0, T0);
    });
    expect(native.range('counter_log', '', null, 100)).toHaveLength(2 * 3);
    let deleted = 0;
    for (let ends = 0, step = 0; ends < 2 && step < 100; step++) {
      const [n, atEnd] = native.sweepLog(T0 + YEAR, 1);
      deleted += n;
      if (atEnd) ends++;
    }
    expect(deleted).toBe(1);
    expect(native.range('counter_log', '', null, 100)).toHaveLength(2 * 2);
    expect(native.creditsGet('key_a', T0)?.[0]).toBe(7);
    expect(native.creditsGet('key_b', T0)?.[0]).toBe(9);
  });

  it('are read back after the store is opened again, and changed in place of the old record', () => {
    const at = openFresh();
    native.transaction(() => native.creditsSet('key_a', 7, -1, 0, T0));
    native.transaction(() => native.creditsSet('key_a', 6, -1, 0, T0));
    native.close();
    native.open(at, false, 0, 0);
    expect(native.creditsGet('key_a', T0)).toEqual([6, -1, 0, T0]);
    // A change in a transaction that fails is not kept.
    expect(() =>
      native.transaction(() => {
        native.creditsSet('key_a', 1, -1, 0, T0);
        expect(native.creditsGet('key_a', T0)?.[0]).toBe(1);
        throw new Error('abort');
      }),
    ).toThrow('abort');
    expect(native.creditsGet('key_a', T0)?.[0]).toBe(6);
  });

  it('are deleted by creditsDelete (the key becomes unlimited)', () => {
    openFresh();
    native.transaction(() => native.creditsSet('key_a', 7, -1, 0, T0));
    expect(native.transaction(() => native.creditsDelete('key_a'))).toBe(true);
    expect(native.creditsGet('key_a', T0)).toBeUndefined();
    expect(native.transaction(() => native.creditsDelete('key_a'))).toBe(false);
  });

  it('refuse a key id with a slash (key ids have none)', () => {
    openFresh();
    expect(() => native.transaction(() => native.creditsSet('key/a', 1, -1, 0, T0))).toThrow(/must not contain '\/'/);
  });
});
