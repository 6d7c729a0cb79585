// src/domain/random.ts hands out the CSPRNG's bytes from a pool: every request gets bytes no
// other request got (across refills too), in exactly the range asked for.
import { describe, expect, it } from 'vitest';
import { fillRandom, randomBytes } from '../../src/domain/random.js';
import { newId } from '../../src/domain/ids.js';
import { generateKey } from '../../src/domain/keyMaterial.js';

describe('random pool', () => {
  it('fills exactly the requested range and leaves the rest alone', () => {
    const target = new Uint8Array(64).fill(0xaa);
    fillRandom(target, 10, 20);
    expect([...target.subarray(0, 10)].every((b) => b === 0xaa)).toBe(true);
    expect([...target.subarray(30)].every((b) => b === 0xaa)).toBe(true);
    // 20 random bytes all equal to 0xaa has probability 2^-160.
    expect([...target.subarray(10, 30)].some((b) => b !== 0xaa)).toBe(true);
  });

  it('never hands out the same bytes twice, across many pool refills', () => {
    const seen = new Set<string>();
    // 16-byte draws over ~40 refills of the 4 KiB pool, plus odd sizes that straddle a refill.
    for (let i = 0; i < 10_000; i++) {
      const size = i % 7 === 0 ? 13 : 16;
      const hex = randomBytes(size).toString('hex');
      expect(seen.has(hex)).toBe(false);
      seen.add(hex);
    }
  });

  it('serves requests larger than its refill share straight from the CSPRNG', () => {
    const big = randomBytes(10_000);
    expect(big.length).toBe(10_000);
    // A long run of one value would mean an unfilled buffer.
    expect(new Set(big).size).toBeGreaterThan(200);
  });

  it('looks random: byte values over 1 MiB of draws are near uniform', () => {
    const counts = new Array<number>(256).fill(0);
    for (let i = 0; i < 65_536; i++) for (const b of randomBytes(16)) counts[b] = (counts[b] ?? 0) + 1;
    // Expected 4096 per value; a chi-square over 255 degrees of freedom stays far below 400
    // for a uniform source (p < 1e-7 to exceed it).
    const chi = counts.reduce((a, c) => a + (c - 4096) ** 2 / 4096, 0);
    expect(chi).toBeLessThan(400);
  });

  it('keeps ids and keys distinct', () => {
    const ids = new Set(Array.from({ length: 5000 }, () => newId('key', 1_700_000_000_000)));
    expect(ids.size).toBe(5000);
    const keys = new Set(Array.from({ length: 5000 }, () => generateKey('sk', 16).key));
    expect(keys.size).toBe(5000);
  });
});
