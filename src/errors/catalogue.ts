// THE error catalogue: every error keyward can answer with, as data. The dispatcher takes
// status, title and the type URL from here and nowhere else; README's error table and the
// pages served under /docs/errors/ are generated from / checked against this list.
//
// `type` URL: `${publicUrl}/docs/errors/keyward/<category>/<name>`; identifier:
// `err:keyward:<category>:<name>`.

export interface CatalogueEntry {
  readonly status: number;
  readonly title: string;
  readonly category: string;
  /** One sentence: when this error is returned. */
  readonly when: string;
}

export const CATALOGUE = {
  invalid_input: { status: 400, title: 'Bad Request', category: 'application', when: 'The request body does not match the procedure\'s schema (a wrong type, a value out of bounds, a missing or unknown field). `errors` lists each problem.' },
  malformed_json: { status: 400, title: 'Bad Request', category: 'bad_request', when: 'The request body is empty, not valid UTF-8 JSON, or nested more than 64 levels deep.' },
  invalid_cursor: { status: 400, title: 'Bad Request', category: 'bad_request', when: 'A pagination cursor that does not belong to this list: malformed, or from another list (another workspace, API, namespace or filter).' },
  permissions_query_syntax_error: { status: 400, title: 'Bad Request', category: 'bad_request', when: 'The permission query of keys.verifyKey is not valid syntax.' },
  invalid_analytics_query: { status: 400, title: 'Bad Request', category: 'bad_request', when: 'The analytics query does not parse, or uses SQL keyward does not run (ClickHouse-only syntax such as LIMIT … BY or a WITH FILL inside a subquery, SAMPLE, PIVOT, recursive CTEs, parameters); `detail` names it.' },
  invalid_analytics_query_type: { status: 400, title: 'Bad Request', category: 'bad_request', when: 'The analytics query is not exactly one SELECT (INSERT, UPDATE, ATTACH, COPY, PRAGMA, SET, DESCRIBE, several statements, …).' },
  invalid_analytics_table: { status: 400, title: 'Bad Request', category: 'bad_request', when: 'The analytics query reads a table other than the public tables of its procedure or its own CTEs (a stored or system table, a schema-qualified name, a table function, the other procedure\'s tables); `detail` names it.' },
  invalid_analytics_function: { status: 400, title: 'Bad Request', category: 'bad_request', when: 'The analytics query calls a function that is not on the allowlist; `detail` names it.' },
  missing_authorization: { status: 401, title: 'Unauthorized', category: 'authentication', when: 'No `Authorization` header was sent.' },
  malformed_authorization: { status: 401, title: 'Unauthorized', category: 'authentication', when: 'The `Authorization` header is not `Bearer <root key>`.' },
  root_key_not_found: { status: 401, title: 'Unauthorized', category: 'authentication', when: 'The root key is unknown or revoked.' },
  insufficient_permissions: { status: 403, title: 'Forbidden', category: 'authorization', when: 'The root key is valid but lacks the permission the procedure needs; `detail` names it.' },
  procedure_not_found: { status: 404, title: 'Not Found', category: 'routing', when: 'No procedure or page exists at this path.' },
  api_not_found: { status: 404, title: 'Not Found', category: 'data', when: 'The API does not exist in the root key\'s workspace (or was deleted).' },
  key_not_found: { status: 404, title: 'Not Found', category: 'data', when: 'The key does not exist in the root key\'s workspace (or was deleted).' },
  permission_not_found: { status: 404, title: 'Not Found', category: 'data', when: 'The permission (by id or slug) does not exist in the root key\'s workspace.' },
  role_not_found: { status: 404, title: 'Not Found', category: 'data', when: 'The role (by id or name) does not exist in the root key\'s workspace; only keys.migrateKeys creates the roles it names.' },
  migration_not_found: { status: 404, title: 'Not Found', category: 'data', when: 'The migration does not exist in the root key\'s workspace (migrations are made with `keyward migrations create`).' },
  identity_not_found: { status: 404, title: 'Not Found', category: 'data', when: 'The identity (by id or externalId) does not exist in the root key\'s workspace.' },
  ratelimit_namespace_not_found: { status: 404, title: 'Not Found', category: 'data', when: 'The rate-limit namespace (by name or id) does not exist in the root key\'s workspace; namespaces are created by their first ratelimits.limit call.' },
  ratelimit_override_not_found: { status: 404, title: 'Not Found', category: 'data', when: 'No override matches the identifier in this namespace.' },
  method_not_allowed: { status: 405, title: 'Method Not Allowed', category: 'routing', when: 'Procedures accept only POST; liveness, metrics, the OpenAPI document and error pages only GET.' },
  request_timeout: { status: 408, title: 'Request Timeout', category: 'bad_request', when: 'The request body did not arrive within KEYWARD_REQUEST_TIMEOUT_MS.' },
  permission_already_exists: { status: 409, title: 'Conflict', category: 'data', when: 'A permission with this slug already exists in the workspace.' },
  role_already_exists: { status: 409, title: 'Conflict', category: 'data', when: 'A role with this name already exists in the workspace.' },
  identity_already_exists: { status: 409, title: 'Conflict', category: 'data', when: 'An identity with this externalId already exists in the workspace.' },
  precondition_failed: { status: 412, title: 'Precondition Failed', category: 'application', when: 'The request needs something the server or the resource is not set up for (e.g. recoverable keys without KEYWARD_VAULT_KEY, a verification naming a rate limit the key does not have).' },
  analytics_not_configured: { status: 412, title: 'Precondition Failed', category: 'data', when: 'analytics.getVerifications and analytics.getRatelimits with analytics off (KEYWARD_ANALYTICS=off).' },
  request_body_too_large: { status: 413, title: 'Payload Too Large', category: 'bad_request', when: 'The request body is larger than KEYWARD_MAX_BODY_BYTES.' },
  unsupported_media_type: { status: 415, title: 'Unsupported Media Type', category: 'bad_request', when: 'The `Content-Type` header is missing, not `application/json`, or names a charset other than UTF-8 (or US-ASCII, a subset of it); or the body is compressed (a `Content-Encoding` other than `identity`).' },
  query_execution_timeout: { status: 422, title: 'Unprocessable Entity', category: 'unprocessable_entity', when: 'The analytics query ran longer than KEYWARD_ANALYTICS_QUERY_TIMEOUT_MS and was stopped.' },
  query_memory_limit_exceeded: { status: 422, title: 'Unprocessable Entity', category: 'unprocessable_entity', when: 'The analytics query needed more memory than KEYWARD_ANALYTICS_MEMORY_MB.' },
  query_rows_limit_exceeded: { status: 422, title: 'Unprocessable Entity', category: 'unprocessable_entity', when: 'The analytics query returned more rows than KEYWARD_ANALYTICS_MAX_ROWS, or would read more than KEYWARD_ANALYTICS_MAX_ROWS_READ.' },
  query_quota_exceeded: { status: 429, title: 'Too Many Requests', category: 'too_many_requests', when: 'The root key ran its KEYWARD_ANALYTICS_QUERIES_PER_HOUR analytics queries of this clock hour.' },
  unexpected_error: { status: 500, title: 'Internal Server Error', category: 'application', when: 'A bug: the request failed in a way keyward does not expect. Nothing was changed.' },
  storage_unavailable: { status: 503, title: 'Service Unavailable', category: 'application', when: 'The store could not complete the request (an I/O error other than a full disk). Nothing was changed; reads keep working.' },
  postgres_unavailable: { status: 503, title: 'Service Unavailable', category: 'cluster', when: 'Cluster mode: PostgreSQL cannot be reached (or a write kept losing races), so a management write was not made; verifications, rate limits and reads go on from the node\'s replica.' },
  cluster_busy: { status: 503, title: 'Service Unavailable', category: 'cluster', when: 'Cluster mode: a verification near the end of a key\'s credits kept having what the cluster settled for it taken by concurrent calls first; nothing was counted, retry it.' },
  shutting_down: { status: 503, title: 'Service Unavailable', category: 'application', when: 'The server is draining after SIGTERM and takes no new requests.' },
  insufficient_storage: { status: 507, title: 'Insufficient Storage', category: 'storage', when: 'The filesystem of the data dir is full: the write was not made (`detail` names the data dir and its free bytes). Reads and verifications go on; writes resume once there is space.' },
} as const satisfies Record<string, CatalogueEntry>;

export type ErrorName = keyof typeof CATALOGUE;

export const ERROR_NAMES = Object.keys(CATALOGUE) as ErrorName[];

export function errorPath(name: ErrorName): string {
  return `/docs/errors/keyward/${CATALOGUE[name].category}/${name}`;
}

export function errorIdentifier(name: ErrorName): string {
  return `err:keyward:${CATALOGUE[name].category}:${name}`;
}
