// The constant-time comparison authenticate() uses for the Authorization header it remembers
// (it holds a root key): the same answers as ===.
import { describe, expect, it } from 'vitest';
import { sameSecret } from '../../src/auth/authenticate.js';

describe('sameSecret', () => {
  const key = 'Bearer kwroot_3xAmPLe0123456789abcdefghijk';
  it('equal strings, including empty and non-ASCII ones', () => {
    expect(sameSecret(key, `${key}`)).toBe(true);
    expect(sameSecret('', '')).toBe(true);
    expect(sameSecret('ключ', 'ключ')).toBe(true);
  });

  it('strings differing anywhere, or in length', () => {
    for (const i of [0, 7, key.length - 1]) {
      const other = key.slice(0, i) + String.fromCharCode(key.charCodeAt(i) ^ 1) + key.slice(i + 1);
      expect(sameSecret(key, other), `at ${i}`).toBe(false);
    }
    expect(sameSecret(key, key.slice(0, -1))).toBe(false);
    expect(sameSecret(key.slice(0, -1), key)).toBe(false);
    expect(sameSecret('a', '')).toBe(false);
  });
});
