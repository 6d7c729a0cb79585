// keys.migrateKeys' work (docs/moving-in.md): the keys of one call checked and drafted, then
// written in one transaction, all of them or none. A call of a thousand keys is tens of
// milliseconds of work, so a one-node server runs it on a pool thread (`run`, through
// workers/jobs.ts), where it holds neither the serving thread nor, while drafting, the writer.
import { newId } from '../domain/ids.js';
import { legacyHashShape, storedHash } from '../domain/legacyHash.js';
import { ApiError } from '../errors/apiError.js';
import { apiNotFound, invalidInput, migrationNotFound, transportedError } from '../errors/errors.js';
import { DEFAULT_BYTE_LENGTH } from '../schemas/keys.js';
import { findApi } from '../store/apis.js';
import { asStorageError, direct } from '../store/db.js';
import { findMigration, hashTaken } from '../store/migrations.js';
import type { PoolReply, StoreOpening } from '../workers/jobs.js';
import { native } from '../engine/native.js';
import { draftKey, encodeEarly, insertEarlyKey, insertKey, type EarlyKey, type NewKey, type NewKeyFields } from './newKey.js';
import type { PlannedIdentity } from '../store/identities.js';

export interface MigrateKeysInput {
  migrationId: string;
  apiId: string;
  keys: (NewKeyFields & { hash: string })[];
}

export interface MigrateKeysResult {
  migrated: { hash: string; keyId: string }[];
  failed: string[];
}

/** A key of the call: the hash it came with, where it is stored, its record, and that encoded when it could be (newKey.ts encodeEarly). */
interface Drafted {
  hash: string;
  at: Buffer;
  draft: NewKey;
  early: EarlyKey | undefined;
}

/**
 * The call's keys checked and drafted, nothing written: 404 for a migration or an API not of
 * the workspace, 400 for a hash that is not of the migration's algorithm or a field that is
 * not valid.
 */
export function draftImport(input: MigrateKeysInput, workspaceId: string, nowMs: number): Drafted[] {
  const migration = findMigration(workspaceId, input.migrationId);
  if (migration === undefined) throw migrationNotFound(input.migrationId);
  if (findApi(workspaceId, input.apiId) === undefined) throw apiNotFound(input.apiId);
  const identities = new Map<string, PlannedIdentity>();
  return input.keys.map((k, i) => {
    const at = storedHash(migration.algorithm, migration.id, k.hash);
    if (at === undefined) throw invalidInput(`body.keys[${i}].hash`, `is not a hash of migration ${migration.id} (${migration.algorithm}): expected ${legacyHashShape(migration.algorithm)}`);
    // A reroll of a migrated key makes a keyward key of the default shape (16 bytes, no prefix).
    const identity = { id: newId('key', nowMs), apiId: input.apiId, workspaceId, hash: at.toString('base64'), start: '', byteLength: DEFAULT_BYTE_LENGTH };
    const draft = draftKey(identity, k, nowMs, `body.keys[${i}]`);
    return { hash: k.hash, at, draft, early: encodeEarly(draft, identities, nowMs) };
  });
}

/**
 * Writes the drafted keys, inside the caller's transaction: a hash already stored, or twice
 * in the call, is failed; identities, permissions and roles are found or created.
 */
export function writeImport(workspaceId: string, apiId: string, drafts: readonly Drafted[], nowMs: number): MigrateKeysResult {
  // The API may have been deleted since the drafts were made.
  if (findApi(workspaceId, apiId) === undefined) throw apiNotFound(apiId);
  const result: MigrateKeysResult = { migrated: [], failed: [] };
  const taken = new Set<string>();
  for (const { hash, at, draft, early } of drafts) {
    const stored = draft.record.hash;
    if (taken.has(stored) || hashTaken(at)) {
      result.failed.push(hash);
      continue;
    }
    taken.add(stored);
    if (early === undefined || !insertEarlyKey(early)) insertKey(draft, 'found-or-created', nowMs);
    result.migrated.push({ hash, keyId: draft.record.id });
  }
  return result;
}

export interface ImportTask {
  store: StoreOpening;
  input: MigrateKeysInput;
  workspaceId: string;
  nowMs: number;
}

/**
 * The pool thread's entry (workers/jobs.ts `elsewhere`): drafts, then commits the call in one
 * transaction of its own. A refusal comes back as data; anything else is thrown (a 500).
 */
export default function run(task: ImportTask): PoolReply<MigrateKeysResult> {
  native.open(task.store.dataDir, false, 0, task.store.initialMapBytes, task.store.writeMap);
  try {
    const drafts = draftImport(task.input, task.workspaceId, task.nowMs);
    return { result: direct.transact(() => writeImport(task.workspaceId, task.input.apiId, drafts, task.nowMs)) };
  } catch (err) {
    const refusal = asStorageError(err);
    if (refusal instanceof ApiError) return { error: transportedError(refusal) };
    throw err;
  }
}
