import { newId } from '../../domain/ids.js';
import { legacyHashShape, storedHash } from '../../domain/legacyHash.js';
import { draftKey, insertKey, type NewKeyFields } from '../../edits/newKey.js';
import { apiNotFound, invalidInput, migrationNotFound } from '../../errors/errors.js';
import type { Ctx } from '../../request/context.js';
import { findApi } from '../../store/apis.js';
import { DEFAULT_BYTE_LENGTH } from '../../schemas/keys.js';
import { findMigration, hashTaken } from '../../store/migrations.js';

export interface MigrateKeysInput {
  migrationId: string;
  apiId: string;
  keys: (NewKeyFields & { hash: string })[];
}

export interface MigrateKeysResult {
  migrated: { hash: string; keyId: string }[];
  failed: string[];
}

/** Every key of the call in one transaction: all of them are written, or (an error) none. */
export async function migrateKeys(input: MigrateKeysInput, ctx: Ctx): Promise<MigrateKeysResult> {
  const ws = ctx.principal.workspaceId;
  return ctx.transact(() => {
    const migration = findMigration(ws, input.migrationId);
    if (migration === undefined) throw migrationNotFound(input.migrationId);
    if (findApi(ws, input.apiId) === undefined) throw apiNotFound(input.apiId);
    const drafts = input.keys.map((k, i) => {
      const at = storedHash(migration.algorithm, migration.id, k.hash);
      if (at === undefined) throw invalidInput(`body.keys[${i}].hash`, `is not a hash of migration ${migration.id} (${migration.algorithm}): expected ${legacyHashShape(migration.algorithm)}`);
      // A reroll of a migrated key makes a keyward key of the default shape (16 bytes, no prefix).
      const identity = { id: newId('key', ctx.nowMs), apiId: input.apiId, workspaceId: ws, hash: at.toString('base64'), start: '', byteLength: DEFAULT_BYTE_LENGTH };
      return { hash: k.hash, at, draft: draftKey(identity, k, ctx.nowMs, `body.keys[${i}]`) };
    });
    const result: MigrateKeysResult = { migrated: [], failed: [] };
    const taken = new Set<string>();
    for (const { hash, at, draft } of drafts) {
      const stored = draft.record.hash;
      if (taken.has(stored) || hashTaken(at)) {
        result.failed.push(hash);
        continue;
      }
      taken.add(stored);
      insertKey(draft, 'found-or-created', ctx.nowMs);
      result.migrated.push({ hash, keyId: draft.record.id });
    }
    return result;
  });
}
