// Identities in the store (records.ts IdentityRecord). Inside the caller's transaction.
import { newId } from '../domain/ids.js';
import { identityExists } from '../errors/errors.js';
import { getRecord, putRecord } from './db.js';
import { idxGet, idxPut } from './indexes.js';
import { IDX, type IdentityRecord, type RatelimitDef } from './records.js';

export function findIdentity(workspaceId: string, idOrExternalId: string): IdentityRecord | undefined {
  const byId = idOrExternalId.startsWith('id_') ? getRecord<IdentityRecord>('identities', idOrExternalId) : undefined;
  if (byId !== undefined && byId.workspaceId === workspaceId) return byId;
  const id = idxGet(IDX.identExt(workspaceId, idOrExternalId));
  return id === undefined ? undefined : getRecord<IdentityRecord>('identities', id);
}

export function insertIdentity(workspaceId: string, externalId: string, fields: { metaJson?: string; ratelimits?: RatelimitDef[] }, nowMs: number): IdentityRecord {
  if (idxGet(IDX.identExt(workspaceId, externalId)) !== undefined) {
    throw identityExists(externalId);
  }
  const record: IdentityRecord = { id: newId('id', nowMs), workspaceId, externalId, ratelimits: fields.ratelimits ?? [], createdAtMs: nowMs };
  if (fields.metaJson !== undefined) record.metaJson = fields.metaJson;
  putIdentity(record);
  return record;
}

/** Writes an identity whose externalId is free in its workspace, and its indexes. */
export function putIdentity(record: IdentityRecord): void {
  putRecord('identities', record.id, record);
  idxPut(IDX.identExt(record.workspaceId, record.externalId), record.id);
  idxPut(IDX.wsIdent(record.workspaceId) + record.id);
}

/** The identity with this externalId, created (no meta, no limits) when missing. */
export function upsertIdentity(workspaceId: string, externalId: string, nowMs: number): IdentityRecord {
  return findIdentity(workspaceId, externalId) ?? insertIdentity(workspaceId, externalId, {}, nowMs);
}

export function saveIdentity(record: IdentityRecord): void {
  putRecord('identities', record.id, record);
}
