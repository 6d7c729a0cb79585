// keys.* request schemas: the interface document's Limits table with DESIGN.md's decisions.
import { emptyObject, idString, MAX_DURATION_MS, object, type JsonSchema } from './common.js';
import { keyResponse } from './apis.js';

export const MAX_SAFE = 9007199254740991;
export const MAX_EXPIRES_MS = 4102444800000;
export const MAX_META_BYTES = 10 * 1024;
/** Random bytes of a key made by keyward when createKey does not say (and of a migrated key's reroll). */
export const DEFAULT_BYTE_LENGTH = 16;

const keyId = idString(3, 255);
export const externalIdField: JsonSchema = { type: 'string', minLength: 1, maxLength: 255, pattern: '^[a-zA-Z0-9_.-]+$' };
/**
 * Permission slugs and role names are 1–128 characters (reference §5.1, §9), except in the
 * lists of keys.createKey and keys.updateKey, which keep the spec's 1–100 (DESIGN.md).
 */
const NAME_CHARS = 128;
const KEY_FIELD_NAME_CHARS = 100;
export const permissionSlug = (max = NAME_CHARS): JsonSchema => ({ type: 'string', minLength: 1, maxLength: max, pattern: '^[a-zA-Z0-9_:\\-\\.\\*]+$' });
export const roleName = (max = NAME_CHARS): JsonSchema => ({ type: 'string', minLength: 1, maxLength: max });
const rolesList = (min: number, chars = NAME_CHARS): JsonSchema => ({ type: 'array', minItems: min, maxItems: 100, items: roleName(chars) });
const permissionsList = (min: number, chars = NAME_CHARS): JsonSchema => ({ type: 'array', minItems: min, maxItems: 1000, items: permissionSlug(chars) });
const expires: JsonSchema = { type: 'integer', minimum: 0, maximum: MAX_EXPIRES_MS, description: 'Unix ms; the key is EXPIRED when server time is after it' };
// At most 100 properties, as Unkey (reference §1.1), and 10 KB serialized (DESIGN.md; checked by the handlers).
const metaObject: JsonSchema = { type: 'object', maxProperties: 100, description: 'Arbitrary JSON returned at verification; at most 100 properties and 10 KB serialized' };
const nullable = (schema: JsonSchema): JsonSchema => ({ anyOf: [schema, { type: 'null' }] });

export const refillSchema: JsonSchema = object(
  {
    interval: { enum: ['daily', 'monthly'] },
    amount: { type: 'integer', minimum: 1, maximum: MAX_SAFE, description: 'The balance is set to this amount at each refill' },
    refillDay: { type: 'integer', minimum: 1, maximum: 31, description: 'monthly only; 29–31 mean the last day in shorter months (default 1)' },
  },
  ['interval', 'amount'],
);

export const ratelimitRequest: JsonSchema = object(
  {
    name: { type: 'string', minLength: 3, maxLength: 128 },
    limit: { type: 'integer', minimum: 1, maximum: MAX_SAFE },
    duration: { type: 'integer', minimum: 1000, maximum: MAX_SAFE, description: 'window length in ms (no maximum but the largest safe integer, as Unkey)' },
    autoApply: { type: 'boolean', default: false },
  },
  ['name', 'limit', 'duration'],
);
export const ratelimitsList: JsonSchema = { type: 'array', maxItems: 50, items: ratelimitRequest, description: 'at most 50, names unique within the list (a repeated name is a 400)' };

/** The fields of a new key that keys.createKey and each key of keys.migrateKeys take. */
const newKeyFields: Record<string, JsonSchema> = {
  name: { type: 'string', minLength: 1, maxLength: 255 },
  externalId: externalIdField,
  meta: metaObject,
  roles: rolesList(0, KEY_FIELD_NAME_CHARS),
  permissions: permissionsList(0, KEY_FIELD_NAME_CHARS),
  expires,
  credits: object({ remaining: nullable({ type: 'integer', minimum: 0, maximum: MAX_SAFE }), refill: refillSchema }, ['remaining']),
  ratelimits: ratelimitsList,
  enabled: { type: 'boolean', default: true },
};

export const createKeyRequest = object(
  {
    apiId: idString(3, 255),
    prefix: { type: 'string', minLength: 1, maxLength: 16, pattern: '^[a-zA-Z0-9_]+$' },
    byteLength: { type: 'integer', minimum: 16, maximum: 255, default: DEFAULT_BYTE_LENGTH },
    ...newKeyFields,
    recoverable: { type: 'boolean', default: false },
  },
  ['apiId'],
);
export const createKeyResponse = object({ keyId: { type: 'string' }, key: { type: 'string' } }, ['keyId', 'key']);

/** Keys per keys.migrateKeys call (a call commits all of them or none). */
export const MAX_MIGRATE_KEYS = 1000;
const migrationId: JsonSchema = { type: 'string', minLength: 3, maxLength: 255 };

export const migrateKeysRequest = object(
  {
    migrationId,
    apiId: idString(3, 255),
    keys: {
      type: 'array',
      minItems: 1,
      maxItems: MAX_MIGRATE_KEYS,
      items: object({ hash: { type: 'string', minLength: 3, maxLength: 255, description: "The key's hash in your system, in the migration's algorithm" }, ...newKeyFields }, ['hash']),
      description: `1 to ${MAX_MIGRATE_KEYS} keys, committed together or not at all`,
    },
  },
  ['migrationId', 'apiId', 'keys'],
);
export const migrateKeysResponse = object(
  {
    migrated: { type: 'array', items: object({ hash: { type: 'string' }, keyId: { type: 'string' } }, ['hash', 'keyId']) },
    failed: { type: 'array', items: { type: 'string' }, description: 'hashes already present (or repeated in the call): not migrated' },
  },
  ['migrated', 'failed'],
);

export const getKeyRequest = object({ keyId, decrypt: { type: 'boolean', default: false } }, ['keyId']);
export const whoamiRequest = object({ key: { type: 'string', minLength: 1, maxLength: 512 } }, ['key']);

export const updateKeyRequest = object(
  {
    keyId,
    name: nullable({ type: 'string', minLength: 1, maxLength: 255 }),
    externalId: nullable(externalIdField),
    meta: nullable(metaObject),
    expires: nullable(expires),
    credits: nullable(object({ remaining: nullable({ type: 'integer', minimum: 0, maximum: MAX_SAFE }), refill: nullable(refillSchema) })),
    ratelimits: ratelimitsList,
    enabled: { type: 'boolean' },
    roles: rolesList(0, KEY_FIELD_NAME_CHARS),
    permissions: permissionsList(0, KEY_FIELD_NAME_CHARS),
  },
  ['keyId'],
);

export const updateCreditsRequest = object(
  {
    keyId,
    operation: { enum: ['set', 'increment', 'decrement'] },
    value: nullable({ type: 'integer', minimum: 0, maximum: MAX_SAFE }),
  },
  ['keyId', 'operation'],
);
export const creditsResponse: JsonSchema = {
  type: 'object',
  properties: { remaining: { type: ['integer', 'null'] }, refill: { type: 'object' } },
  required: ['remaining'],
};

export const deleteKeyRequest = object({ keyId, permanent: { type: 'boolean', default: false } }, ['keyId']);
export const rolesRequest = (min: number) => object({ keyId, roles: rolesList(min) }, ['keyId', 'roles']);
export const permissionsRequest = (min: number) => object({ keyId, permissions: permissionsList(min) }, ['keyId', 'permissions']);
export const rerollKeyRequest = object(
  { keyId, expiration: { type: 'integer', minimum: 0, maximum: MAX_EXPIRES_MS, description: 'ms from now after which the old key expires (rounded up to a whole minute); 0 = at once' } },
  ['keyId', 'expiration'],
);

export const permissionResponse: JsonSchema = {
  type: 'object',
  properties: { id: { type: 'string' }, name: { type: 'string' }, slug: { type: 'string' }, description: { type: 'string' } },
  required: ['id', 'name', 'slug'],
};
export const roleResponse: JsonSchema = {
  type: 'object',
  properties: { id: { type: 'string' }, name: { type: 'string' }, description: { type: 'string' }, permissions: { type: 'array', items: permissionResponse } },
  required: ['id', 'name'],
};
export const rolesResponse: JsonSchema = { type: 'array', items: roleResponse };
export const permissionsResponse: JsonSchema = { type: 'array', items: permissionResponse };
export { keyResponse, emptyObject };

const limitName: JsonSchema = { type: 'string', minLength: 3, maxLength: 255, pattern: '^[^\\u0000-\\u001f]+$' };

export const verifyKeyRequest = object(
  {
    key: { type: 'string', minLength: 1, maxLength: 512 },
    credits: object({ cost: { type: 'integer', minimum: 0, maximum: 1e12 } }, ['cost']),
    ratelimits: {
      type: 'array',
      maxItems: 100,
      items: object({
        name: limitName,
        cost: { type: 'integer', minimum: 0, maximum: 1e12, default: 1 },
        limit: { type: 'integer', minimum: 0, maximum: MAX_SAFE, description: 'With duration (both or neither): an ad-hoc limit for this call (0 refuses), in place of a stored limit of this name' },
        duration: { type: 'integer', minimum: 1000, maximum: MAX_DURATION_MS, description: 'With limit: the ad-hoc window length in ms' },
      }, ['name']),
    },
    permissions: { type: 'string', minLength: 1, maxLength: 1000, description: 'Permission query: names joined with AND / OR, parentheses' },
    tags: { type: 'array', maxItems: 20, items: { type: 'string', minLength: 1, maxLength: 512 }, description: "Kept with the verification's analytics event (KEYWARD_ANALYTICS)" },
    migrationId: { type: 'string', minLength: 1, maxLength: 256, description: 'A key moved in with keys.migrateKeys: found by its legacy hash, and stored under keyward\'s hash from this first use on' },
  },
  ['key'],
);

export const verifyKeyResponse: JsonSchema = {
  type: 'object',
  properties: {
    valid: { type: 'boolean' },
    code: { enum: ['VALID', 'NOT_FOUND', 'DISABLED', 'EXPIRED', 'INSUFFICIENT_PERMISSIONS', 'RATE_LIMITED', 'USAGE_EXCEEDED'] },
    keyId: { type: 'string' },
    name: { type: 'string' },
    meta: { type: 'object' },
    expires: { type: 'integer' },
    credits: { type: 'integer' },
    enabled: { type: 'boolean' },
    permissions: { type: 'array', items: { type: 'string' } },
    roles: { type: 'array', items: { type: 'string' } },
    identity: { type: 'object' },
    ratelimits: { type: 'array', items: { type: 'object' } },
  },
  required: ['valid', 'code'],
};
