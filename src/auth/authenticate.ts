// `Authorization: Bearer <root key>` → Principal, or the 401 ApiError to answer with
// (returned, not thrown: V8 computes a message location for every throw under a native
// callback, and a client with a wrong root key sends it at full rate).
// Principals are cached per thread by the root key's SHA-256 (at most MAX_CACHED: the
// header's spelling, e.g. its spaces, cannot add entries), and the last header seen with its
// answer, a refusal included, is remembered so that a client sending the same header again
// skips parsing and hashing it; that header is compared in constant time, since it holds a
// root key. Both are dropped whenever the store's root-key version changes (create/revoke
// from any thread or process, the CLI included), so a revoked key stops working on its next
// request and a new one works on its first.
import { ApiError } from '../errors/apiError.js';
import { Principal } from './permissions.js';
import { findRootKeyByHash, hashRootKey, rootKeysVersion } from '../store/rootKeys.js';

const CHALLENGE = { 'WWW-Authenticate': 'Bearer' };
const MAX_CACHED = 10_000;
/** Longer tokens are never root keys (KEYWARD_ROOT_KEY takes at most 512 characters). */
const MAX_TOKEN_CHARS = 512;

let cacheVersion = -1;
const cache = new Map<string, Principal>();
let lastHeader = '';
let lastAnswer: Principal | ApiError | undefined;

const MISSING = new ApiError('missing_authorization', 'Send your root key as `Authorization: Bearer <root key>`.', { headers: CHALLENGE });
const MALFORMED = new ApiError('malformed_authorization', 'The Authorization header must be `Bearer <root key>`.', { headers: CHALLENGE });
const UNKNOWN = new ApiError('root_key_not_found', 'The provided root key is invalid: it is unknown or was revoked.', { headers: CHALLENGE });

function resolve(header: string): Principal | ApiError {
  if (header === '') return MISSING;
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header.trim());
  if (match === null || match[1] === undefined) return MALFORMED;
  const token = match[1];
  if (token.length > MAX_TOKEN_CHARS) return UNKNOWN;
  const hash = hashRootKey(token);
  const cached = cache.get(hash);
  if (cached !== undefined) return cached;
  const record = findRootKeyByHash(hash);
  if (record === undefined) return UNKNOWN;
  const principal = new Principal(record.workspaceId, record.id, record.permissions);
  if (cache.size >= MAX_CACHED) cache.clear();
  cache.set(hash, principal);
  return principal;
}

/** `a === b` in a time that depends on their lengths only, not on where they differ. */
export function sameSecret(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

export function authenticate(header: string): Principal | ApiError {
  const version = rootKeysVersion();
  if (version !== cacheVersion) {
    cache.clear();
    lastAnswer = undefined;
    cacheVersion = version;
  }
  if (lastAnswer !== undefined && sameSecret(header, lastHeader)) return lastAnswer;
  const answer = resolve(header);
  lastHeader = header;
  lastAnswer = answer;
  return answer;
}
