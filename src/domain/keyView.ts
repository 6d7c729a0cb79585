import type { KeyRecordBase } from '../store/records.js';

/** A key as keys.getKey and apis.listKeys return it (Unkey's KeyResponseData + externalId). */
export interface KeyView {
  keyId: string;
  start: string;
  enabled: boolean;
  createdAt: number;
  name?: string;
  externalId?: string;
  meta?: Record<string, unknown>;
  updatedAt?: number;
  expires?: number;
}

export function keyView(record: KeyRecordBase): KeyView {
  const view: KeyView = { keyId: record.id, start: record.start, enabled: record.enabled, createdAt: record.createdAtMs };
  if (record.name !== undefined) view.name = record.name;
  if (record.externalId !== undefined) view.externalId = record.externalId;
  if (record.meta !== undefined) view.meta = record.meta;
  if (record.updatedAtMs !== undefined) view.updatedAt = record.updatedAtMs;
  if (record.expiresAtMs !== undefined) view.expires = record.expiresAtMs;
  return view;
}
