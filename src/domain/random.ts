// Cryptographically secure random bytes for ids and key material, drawn from node:crypto's
// CSPRNG in refills of POOL_BYTES rather than one call per value: a call into node:crypto
// costs more than the handful of bytes an id needs. The source is the same; every byte is
// handed out once and then wiped (the pool is refilled, never re-read). One pool per thread
// (module state).
import { randomFillSync } from 'node:crypto';

const POOL_BYTES = 4096;
const pool = Buffer.alloc(POOL_BYTES);
let used = POOL_BYTES;

/** Fills `target[offset, offset + length)` with random bytes. */
export function fillRandom(target: Uint8Array, offset = 0, length = target.length - offset): void {
  if (length > POOL_BYTES / 4) {
    randomFillSync(target, offset, length);
    return;
  }
  if (used + length > POOL_BYTES) {
    randomFillSync(pool);
    used = 0;
  }
  target.set(pool.subarray(used, used + length), offset);
  pool.fill(0, used, used + length); // key material does not linger in the pool once handed out
  used += length;
}

/** `n` new random bytes. */
export function randomBytes(n: number): Buffer {
  const out = Buffer.allocUnsafe(n);
  fillRandom(out);
  return out;
}
