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

/** meta table: bumped on every root-key change so each thread can drop its auth cache (read natively by native/src/meta.rs as the 8-byte float putNumber writes). */
export const META_ROOT_KEYS_VERSION = 'root_keys_version';
export const META_BOOTSTRAPPED = 'bootstrapped';

/** A named rate limit of a key or an identity. */
export interface RatelimitDef {
  id: string;
  name: string;
  limit: number;
  durationMs: number;
  autoApply: boolean;
}

/**
 * key_records table, key = the key's SHA-256 (32 raw bytes), so a verification finds the
 * record in one lookup; the keys table maps keyId → that hash (src/store/keys.ts). THE key
 * layout: written by management code (msgpack map), read field by field by the native
 * verification engine (native/src/records.rs), so the field names below are a contract;
 * test/engine/verify.test.ts drives both sides together. (Stores written before
 * this layout are upgraded at open: native/src/migrate.rs.)
 *  - the credit balance and refill settings live beside the key's rate-limit windows
 *    (ratelimit_windows at `k/<keyId>`), in the engine's fixed binary layout (no credits
 *    record = unlimited), read and changed only through native calls (native/src/credits.rs);
 *  - `metaJson` is the meta object as JSON text, so the engine copies it into replies as is;
 *  - `permissions` are direct permission slugs; role permissions are read from the roles
 *    table at verification, so role changes apply at once.
 */
export interface KeyRecord {
  id: string;
  apiId: string;
  workspaceId: string;
  /** base64 SHA-256 of the whole key string (the plaintext is never stored). */
  hash: string;
  start: string;
  /** As created (rerollKey makes the new key the same shape). */
  prefix?: string;
  byteLength: number;
  enabled: boolean;
  createdAtMs: number;
  updatedAtMs?: number;
  name?: string;
  expiresAtMs?: number;
  identityId?: string;
  externalId?: string;
  metaJson?: string;
  permissions: string[];
  roleIds: string[];
  ratelimits: RatelimitDef[];
  /** AES-256-GCM of the plaintext under KEYWARD_VAULT_KEY (recoverable keys only), base64. */
  vault?: { iv: string; tag: string; data: string };
}

/** permissions table, key = permissionId. Slugs are immutable and unique per workspace. */
export interface PermissionRecord {
  id: string;
  workspaceId: string;
  slug: string;
  name: string;
  description?: string;
  createdAtMs: number;
}

/** roles table, key = roleId. `permissions` are slugs (read by the engine). */
export interface RoleRecord {
  id: string;
  workspaceId: string;
  name: string;
  description?: string;
  permissions: string[];
  createdAtMs: number;
}

/** identities table, key = identityId. Its rate limits are shared by all its keys. */
export interface IdentityRecord {
  id: string;
  workspaceId: string;
  externalId: string;
  metaJson?: string;
  ratelimits: RatelimitDef[];
  createdAtMs: number;
}

/**
 * indexes table: secondary indexes, one key space per kind (values are an id or empty):
 *   perm_slug/<ws>/<slug> → permissionId      ws_perm/<ws>/<permissionId>
 *   role_name/<ws>/<name> → roleId            ws_role/<ws>/<roleId>
 *   ident_ext/<ws>/<externalId> → identityId  ws_ident/<ws>/<identityId>
 *   perm_key/<permissionId>/<keyId>   perm_role/<permissionId>/<roleId>
 *   perm_links/<permissionId> → how many times a role was given it (a count: see linkPermission)
 *   role_key/<roleId>/<keyId>         ident_key/<identityId>/<keyId>
 * and the migrations (store/migrations.ts): migration/<migrationId> → its record (msgpack),
 *   migration_moved/<base64 placeholder> → keyId.
 */
export const IDX = {
  permSlug: (ws: string, slug: string) => `perm_slug/${ws}/${slug}`,
  wsPerm: (ws: string) => `ws_perm/${ws}/`,
  roleName: (ws: string, name: string) => `role_name/${ws}/${name}`,
  wsRole: (ws: string) => `ws_role/${ws}/`,
  identExt: (ws: string, externalId: string) => `ident_ext/${ws}/${externalId}`,
  wsIdent: (ws: string) => `ws_ident/${ws}/`,
  permKey: (permissionId: string) => `perm_key/${permissionId}/`,
  permRole: (permissionId: string) => `perm_role/${permissionId}/`,
  permLinks: (permissionId: string) => `perm_links/${permissionId}`,
  roleKey: (roleId: string) => `role_key/${roleId}/`,
  identKey: (identityId: string) => `ident_key/${identityId}/`,
  nsId: (namespaceId: string) => `ns_id/${namespaceId}`,
  nsOverrides: (namespaceId: string) => `ns_ovr/${namespaceId}/`,
} as const;

/** ratelimit_namespaces table, key `<workspaceId>/<sid of the name>` (see store/ratelimits.ts); indexes ns_id/<id> → that key. */
export interface NamespaceRecord {
  id: string;
  workspaceId: string;
  name: string;
  createdAtMs: number;
}

/**
 * ratelimit_overrides table, key `<namespaceId>/e/<sid>` for exact identifiers and
 * `<namespaceId>/w/<sid>` for patterns with `*` (sid: store/ratelimits.ts storageId). Read by
 * the engine (native/src/records.rs override_record). indexes ns_ovr/<nsId>/<overrideId> →
 * the table key, for listing in id order.
 */
export interface OverrideRecord {
  id: string;
  namespaceId: string;
  identifier: string;
  limit: number;
  durationMs: number;
  createdAtMs: number;
}
