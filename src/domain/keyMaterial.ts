import { randomBytes } from './random.js';
import { base58 } from './base58.js';

/**
 * A new key string (DESIGN.md): `prefix_` + base58 of `byteLength` random bytes (no prefix:
 * just the base58 part); `start` = prefix_ + the first 4 base58 characters.
 */
export function generateKey(prefix: string | undefined, byteLength: number): { key: string; start: string } {
  const body = base58(randomBytes(byteLength));
  const head = prefix === undefined ? '' : `${prefix}_`;
  return { key: head + body, start: head + body.slice(0, 4) };
}
