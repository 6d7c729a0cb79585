// `Authorization: Bearer <root key>` → Principal, or the 401 ApiError to answer with
// (returned, not thrown: V8 computes a message location for every throw under a native
// callback, and a client with a wrong root key sends it at full rate).
// Principals are cached per thread by the presented header (a refusal only as the last
// answer, so random wrong keys cannot fill the cache), and dropped whenever the store's
// root-key version changes (create/revoke from any thread or process, the CLI included), so
// a revoked key stops working on its next request and a new one works on its first.
import { ApiError } from '../errors/apiError.js';
import { Principal } from './permissions.js';
import { findRootKeyByHash, hashRootKey, rootKeysVersion } from '../store/rootKeys.js';

const CHALLENGE = { 'WWW-Authenticate': 'Bearer' };
const MAX_CACHED = 10_000;

let cacheVersion = -1;
const cache = new Map<string, Principal>();
// The last header seen and its answer: most clients send one root key, and comparing the
// strings is cheaper than hashing a new header string for the map.
let lastHeader = '';
let lastPrincipal: Principal | ApiError | undefined;

const MISSING = new ApiError('missing_authorization', 'Send your root key as `Authorization: Bearer <root key>`.', { headers: CHALLENGE });
const MALFORMED = new ApiError('malformed_authorization', 'The Authorization header must be `Bearer <root key>`.', { headers: CHALLENGE });
const UNKNOWN = new ApiError('root_key_not_found', 'The provided root key is invalid: it is unknown or was revoked.', { headers: CHALLENGE });

function resolve(header: string): Principal | ApiError {
  if (header === '') return MISSING;
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header.trim());
  if (match === null || match[1] === undefined) return MALFORMED;
  const token = match[1];
  const record = token.length <= 512 ? findRootKeyByHash(hashRootKey(token)) : undefined;
  return record === undefined ? UNKNOWN : new Principal(record.workspaceId, record.id, record.permissions);
}

export function authenticate(header: string): Principal | ApiError {
  const version = rootKeysVersion();
  if (version !== cacheVersion) {
    cache.clear();
    lastPrincipal = undefined;
    cacheVersion = version;
  }
  if (lastPrincipal !== undefined && header === lastHeader) return lastPrincipal;
  // Keyed by the whole header: a client sends the same one every time, so the common case
  // skips parsing it.
  const cached = cache.get(header);
  if (cached !== undefined) {
    lastHeader = header;
    lastPrincipal = cached;
    return cached;
  }
  const principal = resolve(header);
  if (principal instanceof Principal) {
    if (cache.size >= MAX_CACHED) cache.clear();
    cache.set(header, principal);
  }
  lastHeader = header;
  lastPrincipal = principal;
  return principal;
}
