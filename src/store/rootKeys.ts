import { randomBytes } from '../domain/random.js';
import { base58 } from '../domain/base58.js';
import { newId } from '../domain/ids.js';
import { normalizeGrant } from '../domain/grants.js';
import { delRecord, getNumber, getRecord, getText, putNumber, putRecord, putText, scanPrefix, decode } from './db.js';
import { native } from '../engine/native.js';
import { META_ROOT_KEYS_VERSION, type RootKeyRecord, type WorkspaceRecord } from './records.js';

export const ROOT_KEY_PREFIX = 'kwroot';

export function hashRootKey(key: string): string {
  return native.sha256Base64(key);
}

export function generateRootKey(): string {
  return `${ROOT_KEY_PREFIX}_${base58(randomBytes(24))}`;
}

function bumpVersion(): void {
  putNumber('meta', META_ROOT_KEYS_VERSION, (getNumber('meta', META_ROOT_KEYS_VERSION) ?? 0) + 1);
}

/** Changes whenever a root key is created or revoked (by any thread or process). */
export function rootKeysVersion(): number {
  return native.rootKeysVersion();
}

/** A new workspace (inside the caller's transaction). */
export function createWorkspace(nowMs: number): WorkspaceRecord {
  const ws: WorkspaceRecord = { id: newId('ws', nowMs), createdAtMs: nowMs };
  putRecord('workspaces', ws.id, ws);
  return ws;
}

export function getWorkspace(id: string): WorkspaceRecord | undefined {
  return getRecord<WorkspaceRecord>('workspaces', id);
}

export function listWorkspaces(): WorkspaceRecord[] {
  return scanPrefix('workspaces', '', undefined, 1_000_000).map((e) => decode<WorkspaceRecord>(e.value));
}

/** Stores a root key (its hash only) inside the caller's transaction. */
export function insertRootKey(workspaceId: string, key: string, permissions: readonly string[], nowMs: number): RootKeyRecord {
  const record: RootKeyRecord = {
    id: newId('rk', nowMs),
    workspaceId,
    hash: hashRootKey(key),
    start: key.slice(0, Math.min(key.length, key.indexOf('_') + 5 || 4)),
    permissions: [...new Set(permissions.map(normalizeGrant))],
    createdAtMs: nowMs,
  };
  if (getText('root_key_hashes', record.hash) !== undefined) throw new Error('this root key already exists');
  putRootKey(record);
  return record;
}

/** Writes a root key record and its hash entry (inside the caller's transaction); every thread drops its auth cache. */
export function putRootKey(record: RootKeyRecord): void {
  putRecord('root_keys', record.id, record);
  putText('root_key_hashes', record.hash, record.id);
  bumpVersion();
}

/** A new root key of an existing workspace (inside the caller's transaction), and its value, shown once. */
export function createRootKey(workspaceId: string, permissions: readonly string[], nowMs: number): { record: RootKeyRecord; key: string } {
  if (getWorkspace(workspaceId) === undefined) throw new Error(`workspace ${workspaceId} does not exist`);
  const key = generateRootKey();
  return { record: insertRootKey(workspaceId, key, permissions, nowMs), key };
}

export function findRootKeyByHash(hash: string): RootKeyRecord | undefined {
  const id = getText('root_key_hashes', hash);
  return id === undefined ? undefined : getRecord<RootKeyRecord>('root_keys', id);
}

export function listRootKeys(workspaceId?: string): RootKeyRecord[] {
  return scanPrefix('root_keys', '', undefined, 1_000_000)
    .map((e) => decode<RootKeyRecord>(e.value))
    .filter((r) => workspaceId === undefined || r.workspaceId === workspaceId);
}

/** Revokes a root key (inside the caller's transaction); false when there is none. */
export function revokeRootKey(id: string): boolean {
  const record = getRecord<RootKeyRecord>('root_keys', id);
  if (record === undefined) return false;
  delRecord('root_keys', id);
  delRecord('root_key_hashes', record.hash);
  bumpVersion();
  return true;
}
