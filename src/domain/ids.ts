import { createHash } from 'node:crypto';
import { fillRandom } from './random.js';
import { base58Fixed } from './base58.js';

export type IdPrefix = 'ws' | 'rk' | 'api' | 'key' | 'perm' | 'role' | 'id' | 'rl' | 'rlns' | 'rlor' | 'req' | 'mig';

/**
 * `prefix_` + 22 base58 characters: 6 bytes of creation time (ms) then 10 random bytes,
 * fixed width, so ids sort by creation time and listings in id order are stable.
 */
export function newId(prefix: IdPrefix, nowMs: number): string {
  const bytes = new Uint8Array(16);
  fillRandom(bytes, 6);
  let t = Math.max(0, Math.floor(nowMs));
  for (let i = 5; i >= 0; i--) {
    bytes[i] = t % 256;
    t = Math.floor(t / 256);
  }
  return `${prefix}_${base58Fixed(bytes)}`;
}

/**
 * `prefix_` + 22 base58 characters of the SHA-256 of `name`: the same id wherever and whenever
 * it is made, for a record that comes to be on first use (a rate-limit namespace), so nodes
 * of a cluster creating it at once agree on it.
 */
export function namedId(prefix: IdPrefix, name: string): string {
  return `${prefix}_${base58Fixed(new Uint8Array(createHash('sha256').update(name).digest().subarray(0, 16)))}`;
}
