// THE route table: every procedure keyward serves, with its request and response schemas
// (compiled once by ajv, published in /openapi.json), the root-key permissions checked
// before the handler, the handler, and whether it is a hot (native, inline) or management
// procedure. `ratelimits.*` procedures are also served as `ratelimit.*` (dispatch.ts).
import type { Resource } from '../auth/permissions.js';
import type { Ctx } from '../procedures/context.js';
import type { JsonSchema } from '../schemas/common.js';
import * as apisSchemas from '../schemas/apis.js';
import { createApi } from '../procedures/apis/createApi.js';
import { getApi } from '../procedures/apis/getApi.js';
import { deleteApi } from '../procedures/apis/deleteApi.js';
import { listKeys } from '../procedures/apis/listKeys.js';

/**
 * Allowed when the root key holds `resource.*.action`, or `resource.<id>.action` with id =
 * input[idField]. Handlers check permissions on ids they only learn from the store.
 */
export interface PermissionRule {
  readonly resource: Resource;
  readonly action: string;
  readonly idField?: string;
}

export interface Route {
  readonly procedure: string;
  readonly summary: string;
  readonly kind: 'hot' | 'mgmt';
  readonly request: JsonSchema;
  /** Schema of `data` (of each item for list procedures). */
  readonly response: JsonSchema;
  readonly list?: true;
  readonly permissions: readonly PermissionRule[];
  readonly handler: (input: never, ctx: Ctx) => unknown;
}

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
];

/** How a rule reads in docs: `apis.*.read_api` or `apis.<apiId>.read_api`. */
export function describeRule(rule: PermissionRule): string {
  return rule.idField === undefined ? `${rule.resource}.*.${rule.action}` : `${rule.resource}.<${rule.idField}>.${rule.action}`;
}
