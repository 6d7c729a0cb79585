// Keys in the store: the record (records.ts KeyRecord) under its hash in key_records, the
// keyId → hash entry in keys, its API listing entry, its credits and the reverse indexes of
// its roles, permissions and identity.
// Functions here run inside the caller's transaction unless they say otherwise.
import { native, type CreditsTuple } from '../engine/native.js';
import { encode, getBytes, getRecord, putText } from './db.js';
import { idxDel, idxGet, idxPut, indexValue } from './indexes.js';
import { IDX, type ApiRecord, type KeyRecord } from './records.js';
import { withoutGone } from './gone.js';
import type { Puts } from './writePlan.js';

/**
 * The hash index key: raw SHA-256 of the whole key string, computed by the engine that looks
 * it up (a native call costs a fifth of node:crypto's createHash for a key).
 */
export function keyHashBytes(key: string): Buffer {
  return Buffer.from(native.sha256Base64(key), 'base64');
}

/** The stored record of a key id, whatever its workspace or API (callers check those). */
export function getKeyRecord(keyId: string): KeyRecord | undefined {
  const hash = getBytes('keys', keyId);
  return hash === undefined ? undefined : getRecord<KeyRecord>('key_records', hash);
}

/** The record when it is in this workspace and its API is not deleted. */
function visible(workspaceId: string, key: KeyRecord | undefined): KeyRecord | undefined {
  if (key === undefined || key.workspaceId !== workspaceId) return undefined;
  const api = getRecord<ApiRecord>('apis', key.apiId);
  return api === undefined || api.deletedAtMs !== undefined ? undefined : key;
}

export function findKey(workspaceId: string, keyId: string): KeyRecord | undefined {
  return visible(workspaceId, getKeyRecord(keyId));
}

export function findKeyByPlaintext(workspaceId: string, plaintext: string): KeyRecord | undefined {
  return visible(workspaceId, getRecord<KeyRecord>('key_records', keyHashBytes(plaintext)));
}

/** Writes the record and every index that mirrors it; `previous` is the stored version. */
export function saveKey(written: KeyRecord, previous: KeyRecord | undefined): void {
  // A permission deleted but not yet taken off every key (store/gone.ts) is not written back.
  const permissions = withoutGone(written.workspaceId, written.permissions);
  const record = permissions === written.permissions ? written : { ...written, permissions: [...permissions] };
  const value = encode(record);
  if (previous === undefined && record.permissions.length === 0 && record.roleIds.length === 0) {
    putPlainNewKey(record, value);
    return;
  }
  const hash = Buffer.from(record.hash, 'base64');
  native.put('key_records', hash, value);
  if (previous === undefined) {
    native.put('keys', record.id, hash);
    putText('api_keys', `${record.apiId}/${record.id}`, record.id);
  }
  syncReverseIndexes(record, previous);
}

/**
 * What saveKey writes for a new key without permissions or roles (`encoded` its record), into
 * the transaction or `to` (a write plan: keys.migrateKeys).
 */
export function putPlainNewKey(record: KeyRecord, encoded: Buffer, to: Puts = native): void {
  const hash = Buffer.from(record.hash, 'base64');
  to.put('key_records', hash, encoded);
  to.put('keys', record.id, hash);
  to.put('api_keys', `${record.apiId}/${record.id}`, Buffer.from(record.id, 'utf8'));
  if (record.identityId !== undefined) to.put('indexes', IDX.identKey(record.identityId) + record.id, indexValue());
}

function syncReverseIndexes(record: KeyRecord | undefined, previous: KeyRecord | undefined): void {
  const id = (record ?? previous)?.id ?? '';
  const ws = (record ?? previous)?.workspaceId ?? '';
  const diff = (now: readonly string[], before: readonly string[], prefix: (x: string) => string) => {
    for (const x of before) if (!now.includes(x)) idxDel(prefix(x) + id);
    for (const x of now) if (!before.includes(x)) idxPut(prefix(x) + id);
  };
  const permIds = (k: KeyRecord | undefined) => (k?.permissions ?? []).map((s) => idxGet(IDX.permSlug(ws, s))).filter((x): x is string => x !== undefined);
  diff(permIds(record), permIds(previous), IDX.permKey);
  diff(record?.roleIds ?? [], previous?.roleIds ?? [], IDX.roleKey);
  diff(record?.identityId === undefined ? [] : [record.identityId], previous?.identityId === undefined ? [] : [previous.identityId], IDX.identKey);
}

/** Removes the key and everything that points at it. */
export function removeKey(record: KeyRecord): void {
  native.del('key_records', Buffer.from(record.hash, 'base64'));
  native.del('keys', record.id);
  native.del('api_keys', `${record.apiId}/${record.id}`);
  deleteCredits(record.id);
  syncReverseIndexes(undefined, record);
}

export function readCredits(keyId: string, nowMs: number): CreditsTuple | undefined {
  return native.creditsGet(keyId, nowMs);
}

export function writeCredits(keyId: string, c: CreditsTuple): void {
  native.creditsSet(keyId, c[0], c[1], c[2], c[3]);
}

/** The key becomes unlimited. */
export function deleteCredits(keyId: string): void {
  native.creditsDelete(keyId);
}
