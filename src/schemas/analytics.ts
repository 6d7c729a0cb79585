import { object, type JsonSchema } from './common.js';

/** Unkey's analytics request: one SQL SELECT over its analytics tables. */
export const analyticsRequest = object({ query: { type: 'string', minLength: 1, maxLength: 10_000, description: 'A SQL SELECT over the analytics tables (keyward keeps none: always 412)' } }, ['query']);
/** Rows of arbitrary columns (never returned by keyward). */
export const analyticsResponse: JsonSchema = { type: 'array', items: { type: 'object' } };
