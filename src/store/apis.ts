import { newId } from '../domain/ids.js';
import { decode, getRecord, putRecord, scanPrefix } from './db.js';
import type { ApiRecord } from './records.js';

/** A new API (inside the caller's transaction). */
export function insertApi(workspaceId: string, name: string, nowMs: number): ApiRecord {
  const api: ApiRecord = { id: newId('api', nowMs), workspaceId, name, createdAtMs: nowMs };
  putRecord('apis', api.id, api);
  return api;
}

/** The API if it exists, is not deleted and belongs to `workspaceId`. */
export function findApi(workspaceId: string, apiId: string): ApiRecord | undefined {
  const api = getRecord<ApiRecord>('apis', apiId);
  return api !== undefined && api.workspaceId === workspaceId && api.deletedAtMs === undefined ? api : undefined;
}

/** Soft delete (inside the caller's transaction); returns false when the API was not found for this workspace. */
export function markApiDeleted(workspaceId: string, apiId: string, nowMs: number): boolean {
  const api = findApi(workspaceId, apiId);
  if (api === undefined) return false;
  putRecord('apis', apiId, { ...api, deletedAtMs: nowMs });
  return true;
}

/** Key ids of an API in key-id order from `fromKeyId` (inclusive): an IdSource for paginate. */
export function apiKeyIds(apiId: string, fromKeyId: string | undefined, limit: number): string[] {
  const prefix = `${apiId}/`;
  return scanPrefix('api_keys', prefix, fromKeyId === undefined ? undefined : prefix + fromKeyId, limit).map((r) => r.key.slice(prefix.length));
}

/** APIs marked deleted whose keys may not all be removed yet (e.g. after a crash). */
export function deletedApiIds(): string[] {
  return scanPrefix('apis', '', undefined, Number.MAX_SAFE_INTEGER)
    .map((e) => decode<ApiRecord>(e.value))
    .filter((a) => a.deletedAtMs !== undefined)
    .map((a) => a.id);
}
