// Cryptographically secure random bytes for ids and key material, from the kernel's CSPRNG
// through the engine (one system call per draw: node:crypto's randomFillSync costs several
// times more for the handful of bytes an id needs).
import { native } from '../engine/native.js';

/** Fills `target[offset, offset + length)` with random bytes. */
export function fillRandom(target: Uint8Array, offset = 0, length = target.length - offset): void {
  native.fillRandom(target.subarray(offset, offset + length));
}

/** `n` new random bytes. */
export function randomBytes(n: number): Buffer {
  const out = Buffer.allocUnsafe(n);
  native.fillRandom(out);
  return out;
}
