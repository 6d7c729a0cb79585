// keys.migrateKeys' work (docs/moving-in.md): the keys of one call checked and drafted, then
// written in one transaction, all of them or none. A call of a thousand keys is tens of
// milliseconds of work, so a one-node server runs it on a pool thread (`run`, through
// workers/jobs.ts), where it holds neither the serving thread nor, while drafting, the writer.
// The writes of most keys are drafted too, as a write plan (store/writePlan.ts) that the
// transaction runs in one engine call: the writer, which the hot calls wait for, is held for
// the writes alone.
import { newId } from '../domain/ids.js';
import { formerStoredHashes, legacyHashShape, needsRehash, storedHash } from '../domain/legacyHash.js';
import { ApiError } from '../errors/apiError.js';
import { apiNotFound, invalidInput, migrationNotFound, transportedError } from '../errors/errors.js';
import { DEFAULT_BYTE_LENGTH } from '../schemas/keys.js';
import { findApi } from '../store/apis.js';
import { asStorageError, direct } from '../store/db.js';
import { findMigration, hashTaken, listMigrations, planHashFree } from '../store/migrations.js';
import { GROUP, WritePlan } from '../store/writePlan.js';
import type { PoolReply, StoreOpening } from '../workers/jobs.js';
import { native } from '../engine/native.js';
import { draftKey, encodeEarly, insertKey, planEarlyKey, type NewKey, type NewKeyFields } from './newKey.js';
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

/** A key of the call: the hash it came with, where it is stored, its record, and how it is to be written. */
interface Drafted {
  hash: string;
  at: Buffer;
  /** Where a store written before may hold a key of the same hash (legacyHash.ts formerStoredHashes): the key fails if one does. */
  formerAt: Buffer[];
  draft: NewKey;
  /** Its group in the call's plan (newKey.ts planEarlyKey); 'repeat': its hash came earlier in the call (failed); 'insert': insertKey writes it. */
  write: number | 'repeat' | 'insert';
}

/** The call's keys, drafted, and the plan of the writes of those that could be planned. */
export interface DraftedImport {
  keys: Drafted[];
  plan: WritePlan;
}

/**
 * The call's keys checked and drafted, nothing written: 404 for a migration or an API not of
 * the workspace, 400 for a hash that is not of the migration's algorithm or a field that is
 * not valid.
 */
export function draftImport(input: MigrateKeysInput, workspaceId: string, nowMs: number): DraftedImport {
  const migration = findMigration(workspaceId, input.migrationId);
  if (migration === undefined) throw migrationNotFound(input.migrationId);
  if (findApi(workspaceId, input.apiId) === undefined) throw apiNotFound(input.apiId);
  const identities = new Map<string, PlannedIdentity>();
  const plan = new WritePlan();
  const seen = new Set<string>();
  // Migrations are few: each key of a rehash migration is checked against each one's former placeholder.
  const formers = needsRehash(migration.algorithm) ? listMigrations(undefined).filter((m) => needsRehash(m.algorithm)).map((m) => m.id) : [];
  const keys = input.keys.map((k, i): Drafted => {
    const at = storedHash(migration.algorithm, k.hash);
    if (at === undefined) throw invalidInput(`body.keys[${i}].hash`, `is not a hash of migration ${migration.id} (${migration.algorithm}): expected ${legacyHashShape(migration.algorithm)}`);
    const formerAt = formers.length === 0 ? [] : formerStoredHashes(formers, k.hash);
    // A reroll of a migrated key makes a keyward key of the default shape (16 bytes, no prefix).
    const identity = { id: newId('key', nowMs), apiId: input.apiId, workspaceId, hash: at.toString('base64'), start: '', byteLength: DEFAULT_BYTE_LENGTH };
    const draft = draftKey(identity, k, nowMs, `body.keys[${i}]`);
    if (seen.has(identity.hash)) return { hash: k.hash, at, formerAt, draft, write: 'repeat' };
    seen.add(identity.hash);
    const early = encodeEarly(draft, identities, nowMs);
    if (early === undefined) return { hash: k.hash, at, formerAt, draft, write: 'insert' };
    const group = plan.group();
    for (const hash of [at, ...formerAt]) planHashFree(plan, hash);
    planEarlyKey(plan, early);
    return { hash: k.hash, at, formerAt, draft, write: group };
  });
  return { keys, plan };
}

/**
 * Writes the drafted keys, inside the caller's transaction: a hash already stored, or twice
 * in the call, is failed; identities, permissions and roles are found or created.
 */
export function writeImport(workspaceId: string, apiId: string, { keys, plan }: DraftedImport, nowMs: number): MigrateKeysResult {
  // The API may have been deleted since the drafts were made.
  if (findApi(workspaceId, apiId) === undefined) throw apiNotFound(apiId);
  const outcomes = plan.groups > 0 ? plan.run() : undefined;
  const result: MigrateKeysResult = { migrated: [], failed: [] };
  for (const { hash, at, formerAt, draft, write } of keys) {
    const outcome = typeof write === 'number' ? outcomes?.[write] : undefined;
    const taken = write === 'repeat' || outcome === GROUP.present || (write === 'insert' && [at, ...formerAt].some(hashTaken));
    if (taken) {
      result.failed.push(hash);
      continue;
    }
    // Planned and written, or to be written here: not planned, or its identity changed since the plan.
    if (outcome !== GROUP.written) insertKey(draft, 'found-or-created', nowMs);
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
