// THE route table: every procedure keyward serves, with its request and response schemas
// (compiled once by ajv, published in /openapi.json), the root-key permissions checked
// before the handler, the handler, and whether it is a hot (native, inline) or management
// procedure. `ratelimits.*` procedures are also served as `ratelimit.*` (dispatch.ts).
import type { Resource } from '../domain/grants.js';
import type { Served } from '../engine/hotCalls.js';
import type { Ctx } from '../request/context.js';
import type { JsonSchema } from '../schemas/common.js';
import * as apisSchemas from '../schemas/apis.js';
import { createApi } from '../procedures/apis/createApi.js';
import { getApi } from '../procedures/apis/getApi.js';
import { deleteApi } from '../procedures/apis/deleteApi.js';
import { listKeys } from '../procedures/apis/listKeys.js';
import * as keysSchemas from '../schemas/keys.js';
import { createKey } from '../procedures/keys/createKey.js';
import { getKey } from '../procedures/keys/getKey.js';
import { whoami } from '../procedures/keys/whoami.js';
import { updateKey } from '../procedures/keys/updateKey.js';
import { updateCredits } from '../procedures/keys/updateCredits.js';
import { deleteKey } from '../procedures/keys/deleteKey.js';
import { addRoles } from '../procedures/keys/addRoles.js';
import { removeRoles } from '../procedures/keys/removeRoles.js';
import { setRoles } from '../procedures/keys/setRoles.js';
import { addPermissions } from '../procedures/keys/addPermissions.js';
import { removePermissions } from '../procedures/keys/removePermissions.js';
import { setPermissions } from '../procedures/keys/setPermissions.js';
import { migrateKeys } from '../procedures/keys/migrateKeys.js';
import { rerollKey } from '../procedures/keys/rerollKey.js';
import { verifyKey, verifyKeyFromBody } from '../procedures/keys/verifyKey.js';
import * as permissionsSchemas from '../schemas/permissions.js';
import { createPermission } from '../procedures/permissions/createPermission.js';
import { getPermission } from '../procedures/permissions/getPermission.js';
import { listPermissions } from '../procedures/permissions/listPermissions.js';
import { deletePermission } from '../procedures/permissions/deletePermission.js';
import { createRole } from '../procedures/permissions/createRole.js';
import { getRole } from '../procedures/permissions/getRole.js';
import { listRoles } from '../procedures/permissions/listRoles.js';
import { deleteRole } from '../procedures/permissions/deleteRole.js';
import { setRolePermissions } from '../procedures/permissions/setRolePermissions.js';
import * as identitiesSchemas from '../schemas/identities.js';
import { createIdentity } from '../procedures/identities/createIdentity.js';
import { getIdentity } from '../procedures/identities/getIdentity.js';
import { listIdentities } from '../procedures/identities/listIdentities.js';
import { updateIdentity } from '../procedures/identities/updateIdentity.js';
import { deleteIdentity } from '../procedures/identities/deleteIdentity.js';

import * as rlSchemas from '../schemas/ratelimits.js';
import { limit, limitFromBody } from '../procedures/ratelimits/limit.js';
import { multiLimit, multiLimitFromBody } from '../procedures/ratelimits/multiLimit.js';
import { setOverride } from '../procedures/ratelimits/setOverride.js';
import { getOverride } from '../procedures/ratelimits/getOverride.js';
import { listOverrides } from '../procedures/ratelimits/listOverrides.js';
import { deleteOverride } from '../procedures/ratelimits/deleteOverride.js';
import * as analyticsSchemas from '../schemas/analytics.js';
import { getVerifications } from '../procedures/analytics/getVerifications.js';
import { getRatelimits } from '../procedures/analytics/getRatelimits.js';
const ON_KEY = (action: string) => `apis.<apiId of the key>.${action}`;
const rbac = (action: string): PermissionRule => ({ resource: 'rbac', action });

/**
 * Allowed when the root key holds `resource.*.action`, or `resource.<id>.action` with id =
 * input[idField]. Handlers check permissions on ids they only learn from the store.
 */
export interface PermissionRule {
  readonly resource: Resource;
  readonly action: string;
  readonly idField?: string;
}

interface RouteBase {
  readonly procedure: string;
  readonly summary: string;
  readonly request: JsonSchema;
  /** Schema of `data` (of each item for list procedures). */
  readonly response: JsonSchema;
  readonly list?: true;
  readonly permissions: readonly PermissionRule[];
  /** Permissions the handler checks once it knows the resource (e.g. the key's API). */
  readonly handlerPermissions?: string;
}

/** A management procedure: TypeScript over the store; the dispatcher writes the envelope. */
export interface MgmtRoute extends RouteBase {
  readonly kind: 'mgmt';
  readonly handler: (input: never, ctx: Ctx) => unknown;
}

/**
 * A hot procedure: one engine call (engine/hotCalls.ts), which writes the whole envelope and
 * reports its effect. `fromBody` makes that call straight from the body bytes, skipping
 * JSON.parse, ajv and the handler; the engine declines (undefined, having done nothing) the
 * bodies its reader does not take, which then go the full way: the handler hands the
 * validated input to the same call. Permission rules are checked on the full way only, so a
 * hot route with `permissions` cannot have fromBody (the Dispatcher refuses it).
 */
export interface HotRoute extends RouteBase {
  readonly kind: 'hot';
  readonly handler: (input: never, ctx: Ctx) => Served | Promise<Served>;
  readonly fromBody?: (body: Uint8Array, ctx: Ctx) => Served | undefined;
}

export type Route = MgmtRoute | HotRoute;

export const ROUTES: readonly Route[] = [
  {
    procedure: 'apis.createApi',
    summary: 'Create an API (a namespace for keys).',
    kind: 'mgmt',
    request: apisSchemas.createApiRequest,
    response: apisSchemas.createApiResponse,
    permissions: [{ resource: 'apis', action: 'create_api' }],
    handler: createApi,
  },
  {
    procedure: 'apis.getApi',
    summary: 'Get an API by id.',
    kind: 'mgmt',
    request: apisSchemas.getApiRequest,
    response: apisSchemas.getApiResponse,
    permissions: [{ resource: 'apis', action: 'read_api', idField: 'apiId' }],
    handler: getApi,
  },
  {
    procedure: 'apis.deleteApi',
    summary: 'Delete an API; its keys verify as NOT_FOUND at once.',
    kind: 'mgmt',
    request: apisSchemas.deleteApiRequest,
    response: apisSchemas.deleteApiResponse,
    permissions: [{ resource: 'apis', action: 'delete_api', idField: 'apiId' }],
    handler: deleteApi,
  },
  {
    procedure: 'apis.listKeys',
    summary: 'List the keys of an API, in key-id order, with cursor pagination.',
    kind: 'mgmt',
    request: apisSchemas.listKeysRequest,
    response: apisSchemas.keyResponse,
    list: true,
    permissions: [
      { resource: 'apis', action: 'read_key', idField: 'apiId' },
      { resource: 'apis', action: 'read_api', idField: 'apiId' },
    ],
    handler: listKeys,
  },
  // ── keys ──────────────────────────────────────────────────────────────────────────
  {
    procedure: 'keys.verifyKey',
    summary: 'Verify a key: credits, rate limits, permissions and expiry in one native transaction. Refusals are 200 with valid:false and a code.',
    kind: 'hot',
    request: keysSchemas.verifyKeyRequest,
    response: keysSchemas.verifyKeyResponse,
    permissions: [],
    handlerPermissions: 'apis.*.verify_key, or apis.<apiId>.verify_key (keys of other APIs verify as NOT_FOUND)',
    handler: verifyKey,
    fromBody: verifyKeyFromBody,
  },
  {
    procedure: 'keys.createKey',
    summary: 'Create a key; the key string is returned once.',
    kind: 'mgmt',
    request: keysSchemas.createKeyRequest,
    response: keysSchemas.createKeyResponse,
    permissions: [{ resource: 'apis', action: 'create_key', idField: 'apiId' }],
    handlerPermissions: 'apis.<apiId>.encrypt_key when recoverable',
    handler: createKey,
  },
  {
    procedure: 'keys.migrateKeys',
    summary: "Move keys in from another system by their hashes (a migration made with `keyward migrations create` names the hash algorithm); all keys of a call commit together, a hash already present is listed in `failed`.",
    kind: 'mgmt',
    request: keysSchemas.migrateKeysRequest,
    response: keysSchemas.migrateKeysResponse,
    permissions: [{ resource: 'apis', action: 'create_key', idField: 'apiId' }],
    handler: migrateKeys,
  },
  {
    procedure: 'keys.getKey',
    summary: 'Get a key record (with decrypt: its plaintext, for recoverable keys).',
    kind: 'mgmt',
    request: keysSchemas.getKeyRequest,
    response: keysSchemas.keyResponse,
    permissions: [],
    handlerPermissions: `${ON_KEY('read_key')}; with decrypt also ${ON_KEY('decrypt_key')}`,
    handler: getKey,
  },
  {
    procedure: 'keys.whoami',
    summary: 'Get the record of the key given as plaintext.',
    kind: 'mgmt',
    request: keysSchemas.whoamiRequest,
    response: keysSchemas.keyResponse,
    permissions: [],
    handlerPermissions: ON_KEY('read_key'),
    handler: whoami,
  },
  {
    procedure: 'keys.updateKey',
    summary: 'Change a key: omitted fields stay, null clears, lists replace. Returns the updated key.',
    kind: 'mgmt',
    request: keysSchemas.updateKeyRequest,
    response: keysSchemas.keyResponse,
    permissions: [],
    handlerPermissions: ON_KEY('update_key'),
    handler: updateKey,
  },
  {
    procedure: 'keys.updateCredits',
    summary: 'Set, increment or decrement the credit balance of a key.',
    kind: 'mgmt',
    request: keysSchemas.updateCreditsRequest,
    response: keysSchemas.creditsResponse,
    permissions: [],
    handlerPermissions: ON_KEY('update_key'),
    handler: updateCredits,
  },
  {
    procedure: 'keys.deleteKey',
    summary: 'Delete a key; it verifies as NOT_FOUND at once.',
    kind: 'mgmt',
    request: keysSchemas.deleteKeyRequest,
    response: keysSchemas.emptyObject,
    permissions: [],
    handlerPermissions: ON_KEY('delete_key'),
    handler: deleteKey,
  },
  {
    procedure: 'keys.addRoles',
    summary: 'Add existing roles to a key; returns all its roles.',
    kind: 'mgmt',
    request: keysSchemas.rolesRequest(1),
    response: keysSchemas.rolesResponse,
    permissions: [rbac('add_role_to_key')],
    handlerPermissions: ON_KEY('update_key'),
    handler: addRoles,
  },
  {
    procedure: 'keys.removeRoles',
    summary: 'Remove roles from a key; returns its remaining roles.',
    kind: 'mgmt',
    request: keysSchemas.rolesRequest(1),
    response: keysSchemas.rolesResponse,
    permissions: [],
    handlerPermissions: ON_KEY('update_key'),
    handler: removeRoles,
  },
  {
    procedure: 'keys.setRoles',
    summary: 'Replace the roles of a key (an empty list removes all).',
    kind: 'mgmt',
    request: keysSchemas.rolesRequest(0),
    response: keysSchemas.rolesResponse,
    permissions: [],
    handlerPermissions: ON_KEY('update_key'),
    handler: setRoles,
  },
  {
    procedure: 'keys.addPermissions',
    summary: 'Add direct permissions to a key (missing ones are created); returns its direct permissions.',
    kind: 'mgmt',
    request: keysSchemas.permissionsRequest(1),
    response: keysSchemas.permissionsResponse,
    permissions: [rbac('add_permission_to_key')],
    handlerPermissions: `${ON_KEY('update_key')}; rbac.*.create_permission when a permission is new`,
    handler: addPermissions,
  },
  {
    procedure: 'keys.removePermissions',
    summary: 'Remove direct permissions from a key; returns the remaining ones.',
    kind: 'mgmt',
    request: keysSchemas.permissionsRequest(1),
    response: keysSchemas.permissionsResponse,
    permissions: [rbac('remove_permission_from_key')],
    handlerPermissions: ON_KEY('update_key'),
    handler: removePermissions,
  },
  {
    procedure: 'keys.setPermissions',
    summary: 'Replace the direct permissions of a key (missing ones are created).',
    kind: 'mgmt',
    request: keysSchemas.permissionsRequest(0),
    response: keysSchemas.permissionsResponse,
    permissions: [rbac('add_permission_to_key'), rbac('remove_permission_from_key')],
    handlerPermissions: `${ON_KEY('update_key')}; rbac.*.create_permission when a permission is new`,
    handler: setPermissions,
  },
  {
    procedure: 'keys.rerollKey',
    summary: 'Issue a new key with the settings of an old one; the old one expires after `expiration` ms.',
    kind: 'mgmt',
    request: keysSchemas.rerollKeyRequest,
    response: keysSchemas.createKeyResponse,
    permissions: [],
    handlerPermissions: `${ON_KEY('create_key')}; ${ON_KEY('encrypt_key')} for recoverable keys`,
    handler: rerollKey,
  },
  // ── permissions ───────────────────────────────────────────────────────────────────
  {
    procedure: 'permissions.createPermission',
    summary: 'Create a permission; its slug is unique in the workspace.',
    kind: 'mgmt',
    request: permissionsSchemas.createPermissionRequest,
    response: permissionsSchemas.createPermissionResponse,
    permissions: [rbac('create_permission')],
    handler: createPermission,
  },
  {
    procedure: 'permissions.getPermission',
    summary: 'Get a permission by id or slug.',
    kind: 'mgmt',
    request: permissionsSchemas.getPermissionRequest,
    response: permissionsSchemas.permissionResponse,
    permissions: [rbac('read_permission')],
    handler: getPermission,
  },
  {
    procedure: 'permissions.listPermissions',
    summary: 'List permissions in id order, optionally filtered by a case-insensitive substring of id, name, slug or description.',
    kind: 'mgmt',
    request: permissionsSchemas.listPermissionsRequest,
    response: permissionsSchemas.permissionResponse,
    list: true,
    permissions: [rbac('read_permission')],
    handler: listPermissions,
  },
  {
    procedure: 'permissions.deletePermission',
    summary: 'Delete a permission; it leaves every key and role at once.',
    kind: 'mgmt',
    request: permissionsSchemas.deletePermissionRequest,
    response: permissionsSchemas.emptyObject,
    permissions: [rbac('delete_permission')],
    handler: deletePermission,
  },
  {
    procedure: 'permissions.createRole',
    summary: 'Create a role with permissions (missing ones are created); its name is unique in the workspace.',
    kind: 'mgmt',
    request: permissionsSchemas.createRoleRequest,
    response: permissionsSchemas.createRoleResponse,
    permissions: [rbac('create_role')],
    handlerPermissions: 'rbac.*.add_permission_to_role when permissions are given; rbac.*.create_permission when one is new',
    handler: createRole,
  },
  {
    procedure: 'permissions.getRole',
    summary: 'Get a role with its permissions, by id or name.',
    kind: 'mgmt',
    request: permissionsSchemas.getRoleRequest,
    response: permissionsSchemas.roleResponse,
    permissions: [rbac('read_role')],
    handler: getRole,
  },
  {
    procedure: 'permissions.listRoles',
    summary: 'List roles with their permissions in id order, optionally filtered by a case-insensitive substring of id, name or description.',
    kind: 'mgmt',
    request: permissionsSchemas.listRolesRequest,
    response: permissionsSchemas.roleResponse,
    list: true,
    permissions: [rbac('read_role')],
    handler: listRoles,
  },
  {
    procedure: 'permissions.deleteRole',
    summary: 'Delete a role; it leaves every key at once (its permissions stay).',
    kind: 'mgmt',
    request: permissionsSchemas.deleteRoleRequest,
    response: permissionsSchemas.emptyObject,
    permissions: [rbac('delete_role')],
    handler: deleteRole,
  },
  {
    procedure: 'permissions.setRolePermissions',
    summary: 'Replace the permissions of a role (missing ones are created; an empty list removes all). Returns the resulting permissions.',
    kind: 'mgmt',
    request: permissionsSchemas.setRolePermissionsRequest,
    response: permissionsSchemas.permissionsResponse,
    permissions: [rbac('add_permission_to_role'), rbac('remove_permission_from_role')],
    handlerPermissions: 'rbac.*.create_permission when a permission is new',
    handler: setRolePermissions,
  },
  // ── identities ────────────────────────────────────────────────────────────────────
  {
    procedure: 'identities.createIdentity',
    summary: 'Create an identity (an externalId with meta and shared rate limits) that keys can be linked to.',
    kind: 'mgmt',
    request: identitiesSchemas.createIdentityRequest,
    response: identitiesSchemas.createIdentityResponse,
    permissions: [{ resource: 'identities', action: 'create_identity' }],
    handler: createIdentity,
  },
  {
    procedure: 'identities.getIdentity',
    summary: 'Get an identity by id or externalId.',
    kind: 'mgmt',
    request: identitiesSchemas.getIdentityRequest,
    response: identitiesSchemas.identityResponse,
    permissions: [],
    handlerPermissions: 'identities.<identityId>.read_identity',
    handler: getIdentity,
  },
  {
    procedure: 'identities.listIdentities',
    summary: 'List identities in id order (those the root key may read), optionally filtered by a case-insensitive substring of id or externalId.',
    kind: 'mgmt',
    request: identitiesSchemas.listIdentitiesRequest,
    response: identitiesSchemas.identityResponse,
    list: true,
    permissions: [],
    handlerPermissions: 'identities.<identityId>.read_identity for each identity listed',
    handler: listIdentities,
  },
  {
    procedure: 'identities.updateIdentity',
    summary: 'Change an identity: meta replaces (null clears), ratelimits replaces the set. Returns the identity.',
    kind: 'mgmt',
    request: identitiesSchemas.updateIdentityRequest,
    response: identitiesSchemas.identityResponse,
    permissions: [],
    handlerPermissions: 'identities.<identityId>.update_identity',
    handler: updateIdentity,
  },
  {
    procedure: 'identities.deleteIdentity',
    summary: 'Delete an identity; its keys are unlinked and keep working without it.',
    kind: 'mgmt',
    request: identitiesSchemas.deleteIdentityRequest,
    response: identitiesSchemas.emptyObject,
    permissions: [],
    handlerPermissions: 'identities.<identityId>.delete_identity',
    handler: deleteIdentity,
  },
  // ── ratelimits (also served as ratelimit.*) ──────────────────────────────────────
  {
    procedure: 'ratelimits.limit',
    summary: 'Count a request against a limit for an identifier (sliding window); refusals are 200 with success:false.',
    kind: 'hot',
    request: rlSchemas.limitRequest,
    response: rlSchemas.limitResponse,
    permissions: [],
    handlerPermissions: 'ratelimits.<namespaceId>.limit; ratelimits.*.create_namespace and ratelimits.*.limit when the namespace is new',
    handler: limit,
    fromBody: limitFromBody,
  },
  {
    procedure: 'ratelimits.multiLimit',
    summary: 'Several limits at once, all or nothing: if any is refused, none consumes anything.',
    kind: 'hot',
    request: rlSchemas.multiLimitRequest,
    response: rlSchemas.multiLimitResponse,
    permissions: [],
    handlerPermissions: 'ratelimits.<namespaceId>.limit for every namespace; ratelimits.*.create_namespace and ratelimits.*.limit for new ones',
    handler: multiLimit,
    fromBody: multiLimitFromBody,
  },
  {
    procedure: 'ratelimits.setOverride',
    summary: 'Create or replace the limit and duration for an identifier or * pattern of a namespace.',
    kind: 'mgmt',
    request: rlSchemas.setOverrideRequest,
    response: rlSchemas.setOverrideResponse,
    permissions: [],
    handlerPermissions: 'ratelimits.<namespaceId>.set_override',
    handler: setOverride,
  },
  {
    procedure: 'ratelimits.getOverride',
    summary: 'The override that applies to an identifier (exact, else the longest matching pattern).',
    kind: 'mgmt',
    request: rlSchemas.overrideRequest,
    response: rlSchemas.overrideResponse,
    permissions: [],
    handlerPermissions: 'ratelimits.<namespaceId>.read_override',
    handler: getOverride,
  },
  {
    procedure: 'ratelimits.listOverrides',
    summary: 'The overrides of a namespace in id order (default page 10, max 100).',
    kind: 'mgmt',
    request: rlSchemas.listOverridesRequest,
    response: rlSchemas.listOverridesItem,
    list: true,
    permissions: [],
    handlerPermissions: 'ratelimits.<namespaceId>.read_override',
    handler: listOverrides,
  },
  {
    procedure: 'ratelimits.deleteOverride',
    summary: 'Delete the override stored under exactly this identifier or pattern.',
    kind: 'mgmt',
    request: rlSchemas.overrideRequest,
    response: rlSchemas.emptyObject,
    permissions: [],
    handlerPermissions: 'ratelimits.<namespaceId>.delete_override',
    handler: deleteOverride,
  },
  // ── analytics (DuckDB; 412 analytics_not_configured with KEYWARD_ANALYTICS=off) ────
  {
    procedure: 'analytics.getVerifications',
    summary: 'One ClickHouse-style SELECT over the key verification tables (key_verifications_v1 and its rollups), confined to the workspace and the APIs the root key may read_analytics.',
    kind: 'mgmt',
    request: analyticsSchemas.analyticsRequest,
    response: analyticsSchemas.analyticsResponse,
    permissions: [],
    handlerPermissions: 'apis.*.read_analytics or apis.<apiId>.read_analytics',
    handler: getVerifications,
  },
  {
    procedure: 'analytics.getRatelimits',
    summary: 'One ClickHouse-style SELECT over the rate-limit tables (ratelimits_v1 and its rollups), confined to the workspace and the namespaces the root key may read_analytics.',
    kind: 'mgmt',
    request: analyticsSchemas.analyticsRequest,
    response: analyticsSchemas.analyticsResponse,
    permissions: [],
    handlerPermissions: 'ratelimits.*.read_analytics or ratelimits.<namespaceId>.read_analytics',
    handler: getRatelimits,
  },
];

/** How a rule reads in docs: `apis.*.read_api` or `apis.<apiId>.read_api`. */
export function describeRule(rule: PermissionRule): string {
  return rule.idField === undefined ? `${rule.resource}.*.${rule.action}` : `${rule.resource}.<${rule.idField}>.${rule.action}`;
}
