// keys.verifyKey {migrationId}: a key moved in with keys.migrateKeys under a placeholder
// (domain/legacyHash.ts) is moved under keyward's own hash the first time it is presented,
// so this and every later verification take the normal path, with or without migrationId.
import { needsRehash, placeholderOfKey } from '../domain/legacyHash.js';
import { migrationNotFound } from '../errors/errors.js';
import type { Ctx } from '../request/context.js';
import { keyHashBytes } from '../store/keys.js';
import { findMigration, keyAtHash, moveToOwnHash } from '../store/migrations.js';

/**
 * Undefined when there is nothing to move (the key is under its own hash already, or is not
 * a pending key of this migration); else the move, one transaction. 404 for a migration
 * that is not the root key's workspace's.
 */
export function moveMigratedKey(migrationId: string, key: string, ctx: Ctx): Promise<void> | undefined {
  const ws = ctx.principal.workspaceId;
  const migration = findMigration(ws, migrationId);
  if (migration === undefined) throw migrationNotFound(migrationId);
  if (!needsRehash(migration.algorithm)) return undefined;
  const own = keyHashBytes(key);
  if (keyAtHash(own) !== undefined) return undefined;
  const placeholder = placeholderOfKey(migration.id, key);
  if (placeholder === undefined) return undefined;
  const pending = keyAtHash(placeholder);
  // Only a root key that may verify the key moves it (others are answered NOT_FOUND as usual).
  if (pending?.workspaceId !== ws || !ctx.principal.can('apis', pending.apiId, 'verify_key')) return undefined;
  return ctx.transact(() => {
    const current = keyAtHash(placeholder);
    // Another verification may have moved it meanwhile.
    if (current === undefined || keyAtHash(own) !== undefined) return;
    moveToOwnHash(current, placeholder, own, startOf(key));
  });
}

/** As keys.createKey shows a key: the text up to its first `_` and 4 characters more. */
function startOf(key: string): string {
  return key.slice(0, key.indexOf('_') + 5);
}
