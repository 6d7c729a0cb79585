// Rate-limit namespaces and overrides in the store (records.ts). Windows belong to the
// engine (native/src/limit.rs) and are never touched here.
import { namedId, newId } from '../domain/ids.js';
import { delRecord, getRecord, putRecord } from './db.js';
import { idxDel, idxGet, idxPut } from './indexes.js';
import { native } from '../engine/native.js';
import { IDX, type NamespaceRecord, type OverrideRecord } from './records.js';

/**
 * Mirrors limit.rs storage_id: identifiers over 440 bytes, and those starting with '#', are
 * stored by their hash, so a stored '#…' is always a digest and no identifier can take the
 * place of another's digest.
 */
export function storageId(identifier: string): string {
  return identifier.startsWith('#') || Buffer.byteLength(identifier, 'utf8') > 440 ? `#${native.sha256Base64(identifier)}` : identifier;
}

export function overrideKey(namespaceId: string, identifier: string): string {
  return `${namespaceId}/${identifier.includes('*') ? 'w' : 'e'}/${storageId(identifier)}`;
}

/** The namespace table key: names are stored like identifiers (storageId). */
export function namespaceKey(workspaceId: string, name: string): string {
  return `${workspaceId}/${storageId(name)}`;
}

/** The namespace by its name, else (an `rlns_` id) by its id; native/src/limit.rs namespace_id resolves it the same way. */
export function findNamespace(workspaceId: string, nameOrId: string): NamespaceRecord | undefined {
  let record = getRecord<NamespaceRecord>('ratelimit_namespaces', namespaceKey(workspaceId, nameOrId));
  if (record === undefined && nameOrId.startsWith('rlns_')) {
    const key = idxGet(IDX.nsId(nameOrId));
    const byId = key === undefined ? undefined : getRecord<NamespaceRecord>('ratelimit_namespaces', key);
    if (byId?.workspaceId === workspaceId) record = byId;
  }
  return record;
}

/**
 * The namespace with this name, created when missing (inside the caller's transaction, so
 * concurrent creators agree on one; its id is named after the workspace and the name, so the
 * nodes of a cluster creating it at once agree on it too, and count in the same windows).
 */
export function ensureNamespace(workspaceId: string, name: string, nowMs: number): NamespaceRecord {
  const key = namespaceKey(workspaceId, name);
  const existing = getRecord<NamespaceRecord>('ratelimit_namespaces', key);
  if (existing !== undefined) return existing;
  const record: NamespaceRecord = { id: namedId('rlns', `${workspaceId}/${name}`), workspaceId, name, createdAtMs: nowMs };
  putNamespace(record);
  return record;
}

/** Writes a namespace and its id index. */
export function putNamespace(record: NamespaceRecord): void {
  const key = namespaceKey(record.workspaceId, record.name);
  putRecord('ratelimit_namespaces', key, record);
  idxPut(IDX.nsId(record.id), key);
}

/** Upsert keyed by (namespace, identifier), inside the caller's transaction: an existing override keeps its id. */
export function upsertOverride(ns: NamespaceRecord, identifier: string, limit: number, durationMs: number, nowMs: number): OverrideRecord {
  const key = overrideKey(ns.id, identifier);
  const existing = getRecord<OverrideRecord>('ratelimit_overrides', key);
  const record: OverrideRecord = { id: existing?.id ?? newId('rlor', nowMs), namespaceId: ns.id, identifier, limit, durationMs, createdAtMs: existing?.createdAtMs ?? nowMs };
  putOverride(record);
  return record;
}

/** Writes an override and its listing entry. */
export function putOverride(record: OverrideRecord): void {
  const key = overrideKey(record.namespaceId, record.identifier);
  putRecord('ratelimit_overrides', key, record);
  idxPut(IDX.nsOverrides(record.namespaceId) + record.id, key);
}

/** Deletes the override stored under exactly this identifier (inside the caller's transaction); false if there is none. */
export function removeOverride(ns: NamespaceRecord, identifier: string): boolean {
  const key = overrideKey(ns.id, identifier);
  const existing = getRecord<OverrideRecord>('ratelimit_overrides', key);
  if (existing === undefined) return false;
  delRecord('ratelimit_overrides', key);
  idxDel(IDX.nsOverrides(ns.id) + existing.id);
  return true;
}

export function overrideById(ns: NamespaceRecord, overrideId: string): OverrideRecord | undefined {
  const key = idxGet(IDX.nsOverrides(ns.id) + overrideId);
  return key === undefined ? undefined : getRecord<OverrideRecord>('ratelimit_overrides', key);
}
