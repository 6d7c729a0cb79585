import { fillRandom } from './random.js';
import { base58Fixed } from './base58.js';

export type IdPrefix = 'ws' | 'rk' | 'api' | 'key' | 'perm' | 'role' | 'id' | 'rl' | 'rlns' | 'rlor' | 'req';

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
