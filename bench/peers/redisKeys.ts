import { createHash } from 'node:crypto';

/** The Redis key of a key string's record in the Redis peer: k:<base64 SHA-256 of the key>. */
export function keyHashKey(key: string): string {
  return `k:${createHash('sha256').update(key).digest('base64')}`;
}
