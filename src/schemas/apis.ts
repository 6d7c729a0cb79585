import { cursorField, emptyObject, idString, object, pageLimit, type JsonSchema } from './common.js';

export const createApiRequest = object({ name: { type: 'string', minLength: 3, maxLength: 256, description: 'Name of the API' } }, ['name']);
export const createApiResponse = object({ apiId: { type: 'string' }, id: { type: 'string' }, name: { type: 'string' } }, ['apiId', 'id', 'name']);

export const getApiRequest = object({ apiId: idString(3, 255) }, ['apiId']);
export const getApiResponse = object({ id: { type: 'string' }, name: { type: 'string' } }, ['id', 'name']);

export const deleteApiRequest = object({ apiId: idString(3, 255) }, ['apiId']);
export const deleteApiResponse = emptyObject;

export const listKeysRequest = object(
  {
    apiId: idString(3, 255),
    limit: pageLimit(100, 100),
    cursor: cursorField,
    externalId: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[a-zA-Z0-9_.-]+$' },
    decrypt: { type: 'boolean', default: false },
    revalidateKeysCache: { type: 'boolean', default: false, description: 'Accepted for SDK compatibility; keyward has no key cache to revalidate.' },
  },
  ['apiId'],
);

/** A key as listings and keys.getKey return it (Unkey's KeyResponseData, plus top-level externalId). */
export const keyResponse: JsonSchema = {
  type: 'object',
  properties: {
    keyId: { type: 'string' },
    start: { type: 'string' },
    enabled: { type: 'boolean' },
    createdAt: { type: 'integer' },
    name: { type: 'string' },
    externalId: { type: 'string' },
    meta: { type: 'object' },
    updatedAt: { type: 'integer' },
    expires: { type: 'integer' },
    permissions: { type: 'array', items: { type: 'string' } },
    roles: { type: 'array', items: { type: 'string' } },
    credits: { type: 'object' },
    identity: { type: 'object' },
    ratelimits: { type: 'array', items: { type: 'object' } },
    plaintext: { type: 'string' },
  },
  required: ['keyId', 'start', 'enabled', 'createdAt'],
};
export const listKeysResponse: JsonSchema = { type: 'array', items: keyResponse };
