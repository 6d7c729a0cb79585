// keys.verifyKey {migrationId}: a key moved in with keys.migrateKeys under a placeholder
// (domain/legacyHash.ts) is verified under that placeholder, as any key is under its own
// hash, and moved under keyward's own hash by its first VALID verification, so later ones take
// the normal path, with or without migrationId. A verification that is not VALID, or that
// ends in an error, leaves it where it was.
import { needsRehash, placeholdersOfKey } from '../domain/legacyHash.js';
import type { Served } from '../engine/hotCalls.js';
import { migrationNotFound } from '../errors/errors.js';
import type { Ctx } from '../request/context.js';
import { keyHashBytes } from '../store/keys.js';
import { findMigration, keyAtHash, moveToOwnHash } from '../store/migrations.js';

/** A migrated key still under its placeholder, and where its first VALID verification moves it. */
export interface PendingKey {
  readonly placeholder: Buffer;
  readonly ownHash: Buffer;
  readonly start: string;
}

/**
 * The key presented, when it is a pending key of this migration that the root key may verify;
 * undefined when there is nothing to move (the key is under its own hash already, or is not a
 * pending key of this migration: it is verified the normal way). 404 for a migration that is
 * not the root key's workspace's.
 */
export function pendingKey(migrationId: string, key: string, ctx: Ctx): PendingKey | undefined {
  const ws = ctx.principal.workspaceId;
  const migration = findMigration(ws, migrationId);
  if (migration === undefined) throw migrationNotFound(migrationId);
  if (!needsRehash(migration.algorithm)) return undefined;
  const ownHash = keyHashBytes(key);
  if (keyAtHash(ownHash) !== undefined) return undefined;
  const placeholder = placeholdersOfKey(migration.id, key)?.find((at) => keyAtHash(at) !== undefined);
  if (placeholder === undefined) return undefined;
  const pending = keyAtHash(placeholder);
  // Only a root key that may verify the key moves it (others are answered NOT_FOUND as usual).
  if (pending?.workspaceId !== ws || !ctx.principal.can('apis', pending.apiId, 'verify_key')) return undefined;
  return { placeholder, ownHash, start: startOf(key) };
}

/**
 * The reply to a verification made under `pending`'s placeholder. VALID: the key is moved in
 * the next transaction (with group commit, the one the verification's own writes commit in; a
 * crash between the two leaves the key pending, to be moved by its next VALID verification,
 * and the reply unsent). NOT_FOUND because another verification moved the key meanwhile: made
 * again the normal way (`normally`). Any other answer stands, and the key stays pending.
 */
export async function afterPlaceholder(pending: PendingKey, served: Served, ctx: Ctx, normally: () => Served | Promise<Served>): Promise<Served> {
  const { code } = (JSON.parse(served.body) as { data: { code: string } }).data;
  if (code === 'NOT_FOUND' && keyAtHash(pending.placeholder) === undefined) return normally();
  if (code !== 'VALID') return served;
  await ctx.transact(() => {
    const current = keyAtHash(pending.placeholder);
    // Another VALID verification may have moved it meanwhile.
    if (current === undefined || keyAtHash(pending.ownHash) !== undefined) return;
    moveToOwnHash(current, pending.placeholder, pending.ownHash, pending.start);
  });
  return served;
}

/** As keys.createKey shows a key: the text up to its first `_` and 4 characters more. */
function startOf(key: string): string {
  return key.slice(0, key.indexOf('_') + 5);
}
