// Migrations (keys.migrateKeys, keyward migrations): which legacy hash algorithm a
// workspace's imported keys use. indexes table, `migration/<migrationId>` → the record
// (msgpack; the one record kept in `indexes`, as migrations are few and only looked up by id),
// and `migration_moved/<base64 placeholder>` → keyId for each key moved off its placeholder.
// Functions here run inside the caller's transaction.
import { newId } from '../domain/ids.js';
import type { MigrationAlgorithm } from '../domain/legacyHash.js';
import { native } from '../engine/native.js';
import { decode, getRecord, has, putRecord, scanPrefixAll } from './db.js';
import { idxHas, idxPut } from './indexes.js';
import { saveKey } from './keys.js';
import type { KeyRecord } from './records.js';
import type { WritePlan } from './writePlan.js';

export interface MigrationRecord {
  id: string;
  workspaceId: string;
  algorithm: MigrationAlgorithm;
  createdAtMs: number;
}

const PREFIX = 'migration/';

export function createMigration(workspaceId: string, algorithm: MigrationAlgorithm, nowMs: number): MigrationRecord {
  const record: MigrationRecord = { id: newId('mig', nowMs), workspaceId, algorithm, createdAtMs: nowMs };
  putMigration(record);
  return record;
}

/** Writes a migration record as it is (createMigration, keyward import). */
export function putMigration(record: MigrationRecord): void {
  putRecord('indexes', PREFIX + record.id, record);
}

/** The migration of this id, whatever its workspace. */
export function getMigration(migrationId: string): MigrationRecord | undefined {
  return getRecord<MigrationRecord>('indexes', PREFIX + migrationId);
}

/** The migration when it belongs to this workspace (another workspace's is not found). */
export function findMigration(workspaceId: string, migrationId: string): MigrationRecord | undefined {
  const record = getMigration(migrationId);
  return record?.workspaceId === workspaceId ? record : undefined;
}

/** Every migration, or a workspace's, in id (creation) order. */
export function listMigrations(workspaceId: string | undefined): MigrationRecord[] {
  return scanPrefixAll('indexes', PREFIX)
    .map((e) => decode<MigrationRecord>(e.value))
    .filter((m) => workspaceId === undefined || m.workspaceId === workspaceId);
}

/** The key stored under `hash` (a placeholder of a migrated key, or any key), whatever its workspace. */
export function keyAtHash(hash: Buffer): KeyRecord | undefined {
  return getRecord<KeyRecord>('key_records', hash);
}

/** `moved/<base64 placeholder>` → keyId: a placeholder whose key moved (so its hash is not migrated again). */
const movedEntry = (placeholder: Buffer) => `${MOVED_PREFIX}${placeholder.toString('base64')}`;
const MOVED_PREFIX = 'migration_moved/';

/** hashTaken in a write plan: its group goes on only where no key was ever stored under `hash`. */
export function planHashFree(plan: WritePlan, hash: Buffer): void {
  plan.absent('key_records', hash);
  plan.absent('indexes', movedEntry(hash));
}

/** Whether a key was ever stored under `hash`: it is, or it was a placeholder whose key moved. */
export function hashTaken(hash: Buffer): boolean {
  return has('key_records', hash) || idxHas(movedEntry(hash));
}

/** Moves a migrated key from its placeholder to keyward's own hash of the whole key. */
export function moveToOwnHash(record: KeyRecord, placeholder: Buffer, ownHash: Buffer, start: string): void {
  native.del('key_records', placeholder);
  idxPut(movedEntry(placeholder), record.id);
  const moved: KeyRecord = { ...record, hash: ownHash.toString('base64'), start };
  saveKey(moved, record);
  native.put('keys', record.id, ownHash);
}
