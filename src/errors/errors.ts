// Every error keyward answers with, as a named constructor beside the catalogue (which gives
// status, title and type): the only place an ApiError is built, so each error's wording
// lives once. Details name what the client sent (cut to a readable length) and how to fix it.
import { ApiError, type ValidationItem } from './apiError.js';
import type { ErrorName } from './catalogue.js';
import { outOfSpace } from './space.js';

const CHALLENGE = { 'WWW-Authenticate': 'Bearer' };

// ── 400 ───────────────────────────────────────────────────────────────────────────────

/** A 400 invalid_input for one rule (also those the schema cannot express: cross-field, sizes). */
export function invalidInput(location: string, message: string, fix?: string): ApiError {
  return new ApiError('invalid_input', `${location}: ${message}.`, { errors: [fix === undefined ? { location, message } : { location, message, fix }] });
}

/** The schema's refusals of a body: `errors` lists them, `more` counts those left out. */
export function invalidBody(procedure: string, errors: ValidationItem[], more: number): ApiError {
  const rest = more > 0 ? ` (and ${more} more)` : '';
  return new ApiError('invalid_input', `The request body for ${procedure} is invalid: ${errors.map((e) => e.message).join('; ')}${rest}.`, { errors });
}

export function malformedJson(detail: string, item: ValidationItem): ApiError {
  return new ApiError('malformed_json', detail, { errors: [item] });
}

export function invalidCursor(cursor: string): ApiError {
  return new ApiError('invalid_cursor', `The cursor '${cursor.slice(0, 64)}' was not issued for this list; pass the pagination.cursor of the previous page, or omit it for the first page.`, {
    errors: [{ location: 'body.cursor', message: 'unknown cursor', fix: 'omit the cursor to start from the first page' }],
  });
}

export function permissionsQuerySyntax(message: string): ApiError {
  return new ApiError('permissions_query_syntax_error', `The permission query is not valid: ${message}.`, { errors: [{ location: 'body.permissions', message, fix: 'combine permission names with AND, OR and parentheses, e.g. "a AND (b OR c)"' }] });
}

// The analytics query (`body.query`) as analytics/dialect.ts reads it; Unkey's details lead
// ("Only SELECT queries are allowed", "Access to table 'x' is not allowed", "Function 'f'
// is not allowed"), followed by why and, in `errors`, how to fix it.
const analyticsQueryItem = (message: string, fix?: string): ValidationItem[] => [fix === undefined ? { location: 'body.query', message } : { location: 'body.query', message, fix }];

export function invalidAnalyticsQuery(message: string, fix?: string): ApiError {
  return new ApiError('invalid_analytics_query', `The analytics query is not valid: ${message}.`, { errors: analyticsQueryItem(message, fix) });
}
export function invalidAnalyticsQueryType(message: string): ApiError {
  return new ApiError('invalid_analytics_query_type', `Only SELECT queries are allowed: ${message}.`, { errors: analyticsQueryItem(message, 'send one SELECT statement') });
}
export function invalidAnalyticsTable(table: string, message: string, fix: string): ApiError {
  return new ApiError('invalid_analytics_table', `Access to table '${table.slice(0, 128)}' is not allowed: ${message}.`, { errors: analyticsQueryItem(message, fix) });
}
export function invalidAnalyticsFunction(name: string, message: string, fix?: string): ApiError {
  return new ApiError('invalid_analytics_function', `Function '${name.slice(0, 128)}' is not allowed: ${message}.`, { errors: analyticsQueryItem(message, fix) });
}

// ── 401, 403 ──────────────────────────────────────────────────────────────────────────

export const missingAuthorization = (): ApiError => new ApiError('missing_authorization', 'Send your root key as `Authorization: Bearer <root key>`.', { headers: CHALLENGE });
export const malformedAuthorization = (): ApiError => new ApiError('malformed_authorization', 'The Authorization header must be `Bearer <root key>`.', { headers: CHALLENGE });
export const rootKeyNotFound = (): ApiError => new ApiError('root_key_not_found', 'The provided root key is invalid: it is unknown or was revoked.', { headers: CHALLENGE });

/** 403 naming what would have been enough (`options`: one permission, or alternatives). */
export function insufficientPermissions(options: readonly string[]): ApiError {
  const detail = options.length === 1 ? `Missing permission: '${options[0]}'.` : `Missing one of these permissions: ${options.map((p) => `'${p}'`).join(' or ')}.`;
  return new ApiError('insufficient_permissions', `The root key lacks the permission for this procedure. ${detail}`);
}

// ── 404 ───────────────────────────────────────────────────────────────────────────────

export const procedureNotFound = (detail: string): ApiError => new ApiError('procedure_not_found', detail);
export const apiNotFound = (apiId: string): ApiError => new ApiError('api_not_found', `The API '${apiId}' does not exist in this workspace.`);
export const keyNotFound = (keyId: string): ApiError => new ApiError('key_not_found', `The key '${keyId}' does not exist in this workspace.`);
/** keys.whoami: no key of the workspace has this key string (which is never echoed). */
export const keyStringNotFound = (): ApiError => new ApiError('key_not_found', 'No key of this workspace matches the given key.');
export const permissionNotFound = (idOrSlug: string): ApiError => new ApiError('permission_not_found', `The permission '${idOrSlug}' (id or slug) does not exist in this workspace.`);
/** A permission named by slug in a key's assignment. */
export const assignedPermissionNotFound = (slug: string): ApiError => new ApiError('permission_not_found', `Permission '${slug}' was not found in this workspace.`);
export const roleNotFound = (idOrName: string): ApiError => new ApiError('role_not_found', `The role '${idOrName}' (id or name) does not exist in this workspace.`);
export const migrationNotFound = (migrationId: string): ApiError => new ApiError('migration_not_found', `The migration '${migrationId.slice(0, 255)}' does not exist in this workspace; create one with \`keyward migrations create --workspace <id> --algorithm <name>\`.`);
/** A role named in a key's or role's assignment (only keys.migrateKeys creates roles). */
export const assignedRoleNotFound = (name: string): ApiError => new ApiError('role_not_found', `Role '${name}' was not found in this workspace; create it with permissions.createRole first.`);
export const identityNotFound = (idOrExternalId: string): ApiError => new ApiError('identity_not_found', `The identity '${idOrExternalId}' (id or externalId) does not exist in this workspace.`);
export const namespaceNotFound = (nameOrId: string): ApiError => new ApiError('ratelimit_namespace_not_found', `The rate-limit namespace '${nameOrId}' does not exist in this workspace; it is created by its first ratelimits.limit call.`);
/** ratelimits.getOverride: no override (exact or pattern) matches. */
export const noOverrideMatches = (namespace: string, identifier: string): ApiError => new ApiError('ratelimit_override_not_found', `No override in namespace '${namespace}' matches the identifier '${identifier.slice(0, 128)}'.`);
/** ratelimits.deleteOverride: none is stored for exactly this identifier. */
export const overrideNotStored = (namespace: string, identifier: string): ApiError => new ApiError('ratelimit_override_not_found', `No override is stored for the identifier '${identifier.slice(0, 128)}' in namespace '${namespace}'.`);

// ── 405, 408, 409 ─────────────────────────────────────────────────────────────────────

export const methodNotAllowed = (detail: string, allow: string): ApiError => new ApiError('method_not_allowed', detail, { headers: { Allow: allow } });
export const requestTimeout = (timeoutMs: number): ApiError => new ApiError('request_timeout', `The request body did not arrive within ${timeoutMs} ms.`);
export const permissionExists = (slug: string): ApiError => new ApiError('permission_already_exists', `A permission with slug '${slug}' already exists in this workspace.`);
export const roleExists = (name: string): ApiError => new ApiError('role_already_exists', `A role with name '${name}' already exists in this workspace.`);
export const identityExists = (externalId: string): ApiError => new ApiError('identity_already_exists', `An identity with externalId '${externalId}' already exists in this workspace.`);

// ── 412 ───────────────────────────────────────────────────────────────────────────────

export const vaultMissing = (): ApiError => new ApiError('precondition_failed', 'Recoverable keys need a vault: start keyward with KEYWARD_VAULT_KEY set to 32 random bytes, base64-encoded.');
export const sealedWithAnotherVaultKey = (keyId: string): ApiError => new ApiError('precondition_failed', `The plaintext of key '${keyId}' was sealed with another vault key: KEYWARD_VAULT_KEY must be the key it was created with.`);
export const unknownRateLimit = (name: string): ApiError => new ApiError('precondition_failed', `The rate limit '${name}' was requested but neither the key nor its identity has a limit of that name.`);
/** `what`: 'verification' or 'rate-limit'. */
export const analyticsNotConfigured = (what: string): ApiError => new ApiError('analytics_not_configured', `Analytics is off on this node (KEYWARD_ANALYTICS=off): it records no ${what} events to query. Start keyward with KEYWARD_ANALYTICS=on, or count what you need from /metrics.`);

// ── 413, 415 ──────────────────────────────────────────────────────────────────────────

export const requestBodyTooLarge = (maxBytes: number): ApiError => new ApiError('request_body_too_large', `The request body is larger than ${maxBytes} bytes (KEYWARD_MAX_BODY_BYTES).`);
export const unsupportedMediaType = (detail: string): ApiError => new ApiError('unsupported_media_type', detail);

// ── 422, 429: the analytics query's limits (docs/analytics.md, "Limits") ─────────────

export const queryExecutionTimeout = (ms: number): ApiError => new ApiError('query_execution_timeout', `The analytics query ran longer than ${ms} ms (KEYWARD_ANALYTICS_QUERY_TIMEOUT_MS) and was stopped: narrow its time range, or query a rollup table.`);
export const queryMemoryLimitExceeded = (mb: number): ApiError => new ApiError('query_memory_limit_exceeded', `The analytics query needed more than the ${mb} MB analytics may use (KEYWARD_ANALYTICS_MEMORY_MB): narrow its time range, or query a rollup table.`);
export const queryRowsLimitExceeded = (rows: number, max: number): ApiError => new ApiError('query_rows_limit_exceeded', `The analytics query returned ${rows} rows, more than the ${max} a query may return (KEYWARD_ANALYTICS_MAX_ROWS): aggregate, or add a LIMIT.`);
export const queryRowsReadExceeded = (rows: number, max: number): ApiError => new ApiError('query_rows_limit_exceeded', `The analytics query would go through about ${Math.round(rows)} rows, more than the ${max} a query may read (KEYWARD_ANALYTICS_MAX_ROWS_READ): narrow it by time or key space, read a rollup (key_verifications_per_day_v1 …), or join on a condition.`);
export const queryQuotaExceeded = (perHour: number): ApiError => new ApiError('query_quota_exceeded', `This root key ran its ${perHour} analytics queries of this hour (KEYWARD_ANALYTICS_QUERIES_PER_HOUR); the quota starts again at the top of the hour.`);

/** A refusal as data (an ApiError does not cross a MessagePort or a pool thread's reply): rebuiltError makes it one again. */
export interface TransportedError {
  readonly name: ErrorName;
  readonly detail: string;
  readonly errors?: ValidationItem[];
}

export function transportedError(e: ApiError): TransportedError {
  return { name: e.errorName, detail: e.detail, ...(e.errors === undefined ? {} : { errors: e.errors }) };
}

/** An ApiError a worker built (the analytics worker, a pool thread), rebuilt on the serving thread. */
export function rebuiltError(e: TransportedError): ApiError {
  return new ApiError(e.name, e.detail, e.errors === undefined ? {} : { errors: e.errors });
}

// ── 5xx ───────────────────────────────────────────────────────────────────────────────

export const unexpectedError = (requestId: string): ApiError => new ApiError('unexpected_error', `Something went wrong on our side (request ${requestId}); nothing was changed.`);
export const storageUnavailable = (detail: string): ApiError => new ApiError('storage_unavailable', detail);
/**
 * A write the store could not make: 507 when the data dir's filesystem is full (space.ts),
 * else 503. `what`: the failure as the client should read it ("could not commit this request").
 */
export function storageFailure(what: string, err: unknown): ApiError {
  const message = (err as Error).message;
  const full = outOfSpace(message);
  if (full === undefined) return storageUnavailable(`The store ${what} (${message}); nothing was changed.`);
  return new ApiError(
    'insufficient_storage',
    `The store ${what}: the filesystem of the data dir ${full.dir} is full (${full.free} bytes free). Nothing was changed; reads and verifications go on, and writes resume once there is space.`,
  );
}
/** A reply whose commit (or fsync) failed after its handler ran. */
export const commitFailed = (err: unknown): ApiError => storageFailure('could not commit this request', err);
/** Cluster mode: PostgreSQL cannot take a write now. */
export const postgresUnavailable = (detail: string): ApiError => new ApiError('postgres_unavailable', `${detail}.`);
export const clusterBusy = (detail: string): ApiError => new ApiError('cluster_busy', `${detail}.`);
export const shuttingDown = (): ApiError => new ApiError('shutting_down', 'The server is shutting down; retry on another instance or after it restarts.');
