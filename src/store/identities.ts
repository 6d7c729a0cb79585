// Identities in the store (records.ts IdentityRecord). Inside the caller's transaction.
import { newId } from '../domain/ids.js';
import { identityExists } from '../errors/errors.js';
import { native } from '../engine/native.js';
import { encode, getRecord, putRecord } from './db.js';
import { idxGet, indexValue } from './indexes.js';
import { IDX, type IdentityRecord, type RatelimitDef } from './records.js';
import type { Puts, WritePlan } from './writePlan.js';

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
  const record = newIdentity(workspaceId, externalId, nowMs, fields.ratelimits);
  if (fields.metaJson !== undefined) record.metaJson = fields.metaJson;
  putIdentity(record);
  return record;
}

function newIdentity(workspaceId: string, externalId: string, nowMs: number, ratelimits: RatelimitDef[] = []): IdentityRecord {
  return { id: newId('id', nowMs), workspaceId, externalId, ratelimits, createdAtMs: nowMs };
}

/**
 * The identity an externalId will have for a key drafted outside its transaction: the
 * stored one, or a new one (`created`) to be written with the key. `holdIdentity` says, in
 * the transaction, whether it still is. Not for externalIds that look like identity ids
 * (findIdentity takes those as ids).
 */
export interface PlannedIdentity {
  id: string;
  externalId: string;
  created?: IdentityRecord;
}

export function planIdentity(workspaceId: string, externalId: string, nowMs: number): PlannedIdentity {
  const found = idxGet(IDX.identExt(workspaceId, externalId));
  if (found !== undefined) return { id: found, externalId };
  const created = newIdentity(workspaceId, externalId, nowMs);
  return { id: created.id, externalId, created };
}

/**
 * In a write plan: its group goes on only while the externalId points at the planned
 * identity, which is written when it was to be created and still is missing (a later group
 * of the same plan then finds it written).
 */
export function planHoldIdentity(plan: WritePlan, workspaceId: string, planned: PlannedIdentity): void {
  plan.holds('indexes', IDX.identExt(workspaceId, planned.externalId), indexValue(planned.id), () => {
    if (planned.created !== undefined) putIdentity(planned.created, plan);
  });
}

/** Writes an identity whose externalId is free in its workspace, and its indexes (into the transaction, or `to`). */
export function putIdentity(record: IdentityRecord, to: Puts = native): void {
  to.put('identities', record.id, encode(record));
  to.put('indexes', IDX.identExt(record.workspaceId, record.externalId), indexValue(record.id));
  to.put('indexes', IDX.wsIdent(record.workspaceId) + record.id, indexValue());
}

/** The identity with this externalId, created (no meta, no limits) when missing. */
export function upsertIdentity(workspaceId: string, externalId: string, nowMs: number): IdentityRecord {
  return findIdentity(workspaceId, externalId) ?? insertIdentity(workspaceId, externalId, {}, nowMs);
}

export function saveIdentity(record: IdentityRecord): void {
  putRecord('identities', record.id, record);
}
