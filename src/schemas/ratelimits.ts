// ratelimits.* request schemas (served as ratelimit.* too). Bounds from reference §1.3.
import { cursorField, emptyObject, MAX_DURATION_MS, object, pageLimit, type JsonSchema } from './common.js';
import { MAX_SAFE } from './keys.js';

const namespace: JsonSchema = { type: 'string', minLength: 1, maxLength: 512, description: 'Namespace name or id (rlns_…)' };
const identifier: JsonSchema = { type: 'string', minLength: 1, maxLength: 512 };

const limitItem = object(
  {
    namespace,
    identifier,
    limit: { type: 'integer', minimum: 1, maximum: MAX_SAFE },
    duration: { type: 'integer', minimum: 1000, maximum: MAX_DURATION_MS, description: 'window length in ms' },
    cost: { type: 'integer', minimum: 0, maximum: MAX_SAFE, default: 1 },
  },
  ['namespace', 'identifier', 'limit', 'duration'],
);

export const limitRequest = limitItem;
export const limitResponse = object(
  { success: { type: 'boolean' }, limit: { type: 'integer' }, remaining: { type: 'integer' }, reset: { type: 'integer', description: 'end of the current window bucket, Unix ms' }, overrideId: { type: 'string' } },
  ['success', 'limit', 'remaining', 'reset'],
);

export const multiLimitRequest: JsonSchema = { type: 'array', minItems: 1, maxItems: 100, items: limitItem };
export const multiLimitResponse = object(
  {
    passed: { type: 'boolean' },
    limits: {
      type: 'array',
      items: object(
        { namespace: { type: 'string' }, identifier: { type: 'string' }, limit: { type: 'integer' }, remaining: { type: 'integer' }, reset: { type: 'integer' }, passed: { type: 'boolean' }, overrideId: { type: 'string' } },
        ['namespace', 'identifier', 'limit', 'remaining', 'reset', 'passed'],
      ),
    },
  },
  ['passed', 'limits'],
);

export const setOverrideRequest = object(
  {
    namespace,
    identifier: { ...identifier, description: 'Exact identifier, or a pattern where * matches any run of characters' },
    limit: { type: 'integer', minimum: 0, maximum: MAX_SAFE, description: '0 refuses every request' },
    duration: { type: 'integer', minimum: 1000, maximum: MAX_SAFE, description: 'window length in ms (no maximum but the largest safe integer)' },
  },
  ['namespace', 'identifier', 'limit', 'duration'],
);
export const setOverrideResponse = object({ overrideId: { type: 'string' } }, ['overrideId']);
export const overrideRequest = object({ namespace, identifier }, ['namespace', 'identifier']);
const overrideView = { overrideId: { type: 'string' }, identifier: { type: 'string' }, limit: { type: 'integer' }, duration: { type: 'integer' } };
export const overrideResponse = object(overrideView, Object.keys(overrideView));
/** A listOverrides item: getOverride's view plus the namespace's name. */
export const listOverridesItem = object({ ...overrideView, namespace: { type: 'string', description: 'the namespace name' } }, [...Object.keys(overrideView), 'namespace']);
export const listOverridesRequest = object({ namespace, cursor: cursorField, limit: pageLimit(10, 100) }, ['namespace']);
export { emptyObject };
