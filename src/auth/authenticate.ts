// `Authorization: Bearer <root key>` → Principal, or the 401 ApiError to answer with
// (returned, not thrown: V8 computes a message location for every throw under a native
// callback, and a client with a wrong root key sends it at full rate).
// One Authenticator per serving thread. Principals are cached by the root key's SHA-256 (at
// most MAX_CACHED: the header's spelling, e.g. its spaces, cannot add entries), and the last
// header seen with its answer, a refusal included, is remembered so that a client sending
// the same header again skips parsing and hashing it; that header is compared in constant
// time, since it holds a root key. Both are dropped whenever the store's root-key version
// changes (create/revoke from any thread or process, the CLI included), so a revoked key
// stops working on its next request and a new one works on its first.
import type { ApiError } from '../errors/apiError.js';
import { malformedAuthorization, missingAuthorization, rootKeyNotFound } from '../errors/errors.js';
import { Principal } from './permissions.js';
import { findRootKeyByHash, hashRootKey, rootKeysVersion } from '../store/rootKeys.js';

const MAX_CACHED = 10_000;
/** Longer tokens are never root keys (KEYWARD_ROOT_KEY takes at most 512 characters). */
const MAX_TOKEN_CHARS = 512;

const MISSING = missingAuthorization();
const MALFORMED = malformedAuthorization();
const UNKNOWN = rootKeyNotFound();

/** `a === b` in a time that depends on their lengths only, not on where they differ. */
export function sameSecret(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

export class Authenticator {
  private cacheVersion = -1;
  private readonly cache = new Map<string, Principal>();
  private lastHeader = '';
  private lastAnswer: Principal | ApiError | undefined;

  authenticate(header: string): Principal | ApiError {
    const version = rootKeysVersion();
    if (version !== this.cacheVersion) {
      this.cache.clear();
      this.lastAnswer = undefined;
      this.cacheVersion = version;
    }
    if (this.lastAnswer !== undefined && sameSecret(header, this.lastHeader)) return this.lastAnswer;
    const answer = this.resolve(header);
    this.lastHeader = header;
    this.lastAnswer = answer;
    return answer;
  }

  private resolve(header: string): Principal | ApiError {
    if (header === '') return MISSING;
    const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header.trim());
    if (match === null || match[1] === undefined) return MALFORMED;
    const token = match[1];
    if (token.length > MAX_TOKEN_CHARS) return UNKNOWN;
    const hash = hashRootKey(token);
    const cached = this.cache.get(hash);
    if (cached !== undefined) return cached;
    const record = findRootKeyByHash(hash);
    if (record === undefined) return UNKNOWN;
    const principal = new Principal(record.workspaceId, record.id, record.permissions);
    if (this.cache.size >= MAX_CACHED) this.cache.clear();
    this.cache.set(hash, principal);
    return principal;
  }
}
