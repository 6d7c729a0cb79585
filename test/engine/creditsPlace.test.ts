// Where credits live (native/src/credits.rs): beside the key's rate-limit windows in the
// ratelimit_windows table, so the window sweeper must leave them alone. (The upgrade from
// the older layout is in migrate.test.ts.)
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
  sweepWindows(after: Buffer, nowMs: number, max: number): [Buffer, number];
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
  it('survive the window sweeper, which still removes the stale windows around them', () => {
    openFresh();
    native.transaction(() => {
      native.creditsSet('key_a', 7, -1, 0, T0);
      native.creditsSet('key_b', 9, 100, 0, T0);
      // A stale key window right after key_a's credits (the layout verify.rs writes).
      native.put('ratelimit_windows', 'k/key_a/requests', Buffer.alloc(24));
    });
    let after: Buffer = Buffer.alloc(0);
    let deleted = 0;
    for (let page = 0; page < 100; page++) {
      const [next, n] = native.sweepWindows(after, T0 + YEAR, 1);
      deleted += n;
      if (next.length === 0) break;
      after = next;
    }
    expect(deleted).toBe(1);
    expect(native.get('ratelimit_windows', 'k/key_a/requests')).toBeUndefined();
    expect(native.creditsGet('key_a', T0)?.[0]).toBe(7);
    expect(native.creditsGet('key_b', T0)?.[0]).toBe(9);
  });

  it('are deleted by creditsDelete (the key becomes unlimited)', () => {
    openFresh();
    native.transaction(() => native.creditsSet('key_a', 7, -1, 0, T0));
    expect(native.transaction(() => native.creditsDelete('key_a'))).toBe(true);
    expect(native.creditsGet('key_a', T0)).toBeUndefined();
    expect(native.transaction(() => native.creditsDelete('key_a'))).toBe(false);
  });

  it('refuse a key id with a slash, which would read as a window', () => {
    openFresh();
    expect(() => native.transaction(() => native.creditsSet('key/a', 1, -1, 0, T0))).toThrow(/must not contain '\/'/);
  });
});
