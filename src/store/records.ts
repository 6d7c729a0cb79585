// Record layouts of the management tables (msgpack maps; one definition each).
// Table keys:  workspaces: workspaceId · root_keys: rootKeyId · root_key_hashes: base64
// SHA-256 of the root key → rootKeyId (UTF-8) · apis: apiId · api_keys: `${apiId}/${keyId}`
// → keyId (index for apis.listKeys, ordered by key id) · meta: small named values.

export interface WorkspaceRecord {
  id: string;
  createdAtMs: number;
}

export interface RootKeyRecord {
  id: string;
  workspaceId: string;
  /** base64 SHA-256 of the full root key; the plaintext is never stored. */
  hash: string;
  /** First characters of the key, to recognise it in listings. */
  start: string;
  /** Normalised grants (see auth/permissions.ts). */
  permissions: string[];
  createdAtMs: number;
}

export interface ApiRecord {
  id: string;
  workspaceId: string;
  name: string;
  createdAtMs: number;
  /** Set by apis.deleteApi; a deleted API and its keys are not found from then on. */
  deletedAtMs?: number;
}

/** meta table: bumped on every root-key change so each thread can drop its auth cache. */
export const META_ROOT_KEYS_VERSION = 'root_keys_version';
export const META_BOOTSTRAPPED = 'bootstrapped';

/**
 * A key as management code sees it (keys table, key = keyId). The full layout, including
 * what the native verification engine reads, is settled with keys.createKey; listings
 * only rely on these fields.
 */
export interface KeyRecordBase {
  id: string;
  apiId: string;
  workspaceId: string;
  start: string;
  enabled: boolean;
  createdAtMs: number;
  name?: string;
  externalId?: string;
  meta?: Record<string, unknown>;
  updatedAtMs?: number;
  expiresAtMs?: number;
}
