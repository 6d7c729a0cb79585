// `Authorization: Bearer <root key>` → Principal, or a 401 ApiError.
// Principals are cached per thread by the presented header and dropped whenever the store's
// root-key version changes (create/revoke from any thread or process, the CLI included),
// so a revoked key stops working on its next request.
import { ApiError } from '../errors/apiError.js';
import { Principal } from './permissions.js';
import { findRootKeyByHash, hashRootKey, rootKeysVersion } from '../store/rootKeys.js';

const CHALLENGE = { 'WWW-Authenticate': 'Bearer' };
const MAX_CACHED = 10_000;

let cacheVersion = -1;
const cache = new Map<string, Principal>();
// The last header seen and its principal: most clients send one root key, and comparing
// the strings is cheaper than hashing a new header string for the map.
let lastHeader = '';
let lastPrincipal: Principal | undefined;

function extractToken(header: string): string {
  if (header === '') throw new ApiError('missing_authorization', 'Send your root key as `Authorization: Bearer <root key>`.', { headers: CHALLENGE });
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header.trim());
  if (match === null || match[1] === undefined) {
    throw new ApiError('malformed_authorization', 'The Authorization header must be `Bearer <root key>`.', { headers: CHALLENGE });
  }
  return match[1];
}

export function authenticate(header: string): Principal {
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
  const token = extractToken(header);
  const record = token.length <= 512 ? findRootKeyByHash(hashRootKey(token)) : undefined;
  if (record === undefined) throw new ApiError('root_key_not_found', 'The provided root key is invalid: it is unknown or was revoked.', { headers: CHALLENGE });
  const principal = new Principal(record.workspaceId, record.id, record.permissions);
  if (cache.size >= MAX_CACHED) cache.clear();
  cache.set(header, principal);
  lastHeader = header;
  lastPrincipal = principal;
  return principal;
}
