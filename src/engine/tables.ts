// The store's tables, in the order of native/src/store's one table list (their ids there);
// test/engine/contract.test.ts compares this list with the engine's `tables()`.
export const TABLES = [
  'meta',
  'workspaces',
  'root_keys',
  'root_key_hashes',
  'apis',
  'keys',
  'key_hashes',
  'api_keys',
  'permissions',
  'roles',
  'identities',
  'ratelimit_namespaces',
  'ratelimit_overrides',
  'ratelimit_windows',
  'credits',
  'indexes',
  'key_records',
  'counter_log',
] as const;

export type Table = (typeof TABLES)[number];
