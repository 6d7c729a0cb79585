// Cryptographically secure random bytes for ids and key material, from the kernel's CSPRNG
// through the engine (native/src/random.rs serves small draws from a per-thread pool:
// node:crypto's randomFillSync costs several times more for the few bytes an id needs).
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
