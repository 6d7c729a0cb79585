import { object, type JsonSchema } from './common.js';

/** Unkey's analytics request: one SQL SELECT over its analytics tables. */
export const analyticsRequest = object({ query: { type: 'string', minLength: 1, maxLength: 10_000, description: 'One ClickHouse-style SQL SELECT over the analytics tables (docs/analytics.md)' } }, ['query']);
/** Rows of the query's columns. */
export const analyticsResponse: JsonSchema = { type: 'array', items: { type: 'object' } };
