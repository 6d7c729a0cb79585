// One temporary store for a test file: opened in a new directory before its tests, closed
// and removed after them.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { native } from '../../src/engine/native.js';

/** `syncIntervalMs` and `mapBytes` as native.open takes them; `dir()` is the store's directory. */
export function tempStore(prefix: string, syncIntervalMs = 0, mapBytes = 16 * 1024 * 1024): { dir(): string } {
  let dir = '';
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), prefix));
    native.open(dir, false, syncIntervalMs, mapBytes);
  });
  afterAll(() => {
    native.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { dir: () => dir };
}

/** Runs `fn` inside one batch of hot calls, as a server turn does (group commit), and commits it. */
export function inBatch<T>(fn: () => T): T {
  native.batchBegin();
  try {
    return fn();
  } finally {
    expect(native.batchCommit()).toBe(true);
  }
}
