// The only place response bodies are built. Success: {meta:{requestId}, data, pagination?};
// error: {meta:{requestId}, error:{title, detail, status, type, errors?}} — `errors` is
// always present on 400s (the SDK requires the array).
import { CATALOGUE, errorPath } from '../errors/catalogue.js';
import type { ApiError } from '../errors/apiError.js';

export interface Reply {
  status: number;
  body: string;
  headers: Record<string, string> | undefined;
}

/** The engine's hot calls write this same envelope themselves (native/src/hot.rs Scratch::envelope; test/engine/envelope.test.ts compares them). */
export function successBody(requestId: string, data: unknown, pagination?: { cursor: string | undefined; hasMore: boolean }): string {
  if (pagination === undefined) return `{"meta":{"requestId":"${requestId}"},"data":${JSON.stringify(data)}}`;
  const page = pagination.cursor === undefined ? { hasMore: pagination.hasMore } : { cursor: pagination.cursor, hasMore: pagination.hasMore };
  return `{"meta":{"requestId":"${requestId}"},"data":${JSON.stringify(data)},"pagination":${JSON.stringify(page)}}`;
}

export function errorReply(requestId: string, err: ApiError, publicUrl: string): Reply {
  const entry = CATALOGUE[err.errorName];
  const error: Record<string, unknown> = {
    title: entry.title,
    detail: err.detail,
    status: entry.status,
    type: publicUrl + errorPath(err.errorName),
  };
  if (entry.status === 400) error.errors = err.errors ?? [];
  else if (err.errors !== undefined) error.errors = err.errors;
  return { status: entry.status, body: JSON.stringify({ meta: { requestId }, error }), headers: err.headers };
}
