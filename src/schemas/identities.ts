// identities.* request and response schemas (reference/unkey-v2.md §1.5 and §6).
import { cursorField, emptyObject, object, pageLimit, type JsonSchema } from './common.js';
import { externalIdField, ratelimitsList } from './keys.js';

/** Identity meta: any JSON object of at most 100 properties (reference §1.5), at most 1 MiB serialized (checked by the handlers). */
export const MAX_IDENTITY_META_BYTES = 1024 * 1024;

const metaObject: JsonSchema = { type: 'object', maxProperties: 100, description: 'Arbitrary JSON returned with verifications of linked keys; at most 100 properties and 1 MiB serialized' };
const identityRef: JsonSchema = { type: 'string', minLength: 1, maxLength: 255, description: 'identity id or externalId' };

export const createIdentityRequest = object({ externalId: externalIdField, meta: metaObject, ratelimits: ratelimitsList }, ['externalId']);
export const createIdentityResponse = object({ identityId: { type: 'string' } }, ['identityId']);

export const getIdentityRequest = object({ identity: identityRef }, ['identity']);
export const listIdentitiesRequest = object({ limit: pageLimit(100, 100), cursor: cursorField, search: { type: 'string', maxLength: 256, description: 'case-insensitive substring of id or externalId' } });
export const updateIdentityRequest = object(
  { identity: identityRef, meta: { anyOf: [metaObject, { type: 'null' }], description: 'replaces the meta; null clears it' }, ratelimits: { ...ratelimitsList, description: 'replaces the set (at most 50, names unique within the list); a limit keeps its id when its name stays' } },
  ['identity'],
);
export const deleteIdentityRequest = getIdentityRequest;

const ratelimitResponse: JsonSchema = {
  type: 'object',
  properties: { id: { type: 'string' }, name: { type: 'string' }, limit: { type: 'integer' }, duration: { type: 'integer' }, autoApply: { type: 'boolean' } },
  required: ['id', 'name', 'limit', 'duration', 'autoApply'],
};
export const identityResponse: JsonSchema = {
  type: 'object',
  properties: { id: { type: 'string' }, externalId: { type: 'string' }, meta: { type: 'object' }, ratelimits: { type: 'array', items: ratelimitResponse } },
  required: ['id', 'externalId'],
};

export { emptyObject };
