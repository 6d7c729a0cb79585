// A key of the root key's workspace, looked up with the permission the procedure needs on
// its API: 403 before any lookup when the root key may do it on no API at all (so it learns
// nothing about which ids exist), 404 for another workspace's key.
import { requirePermission, requireSomewhere } from '../auth/require.js';
import { open } from '../domain/vault.js';
import { keyNotFound, sealedWithAnotherVaultKey, vaultMissing } from '../errors/errors.js';
import type { Ctx } from '../request/context.js';
import { findKey } from '../store/keys.js';
import type { KeyRecord } from '../store/records.js';

/** The root key may `action` the keys of some API (403 before any lookup otherwise). */
export function requireKeyAction(ctx: Ctx, action: string): void {
  requireSomewhere(ctx.principal, 'apis', '<apiId>', action);
}

/** The key of this workspace, with `action` on its API required of the root key. */
export function keyFor(ctx: Ctx, keyId: string, action: string): KeyRecord {
  requireKeyAction(ctx, action);
  const key = findKey(ctx.principal.workspaceId, keyId);
  if (key === undefined) throw keyNotFound(keyId);
  requirePermission(ctx.principal, 'apis', key.apiId, action);
  return key;
}

/** For decrypt:true — checks decrypt_key and the vault, returns record → plaintext (if recoverable). */
export function decryptPlaintext(ctx: Ctx, apiId: string): (record: KeyRecord) => string | undefined {
  requirePermission(ctx.principal, 'apis', apiId, 'decrypt_key');
  const vaultKey = ctx.vaultKey;
  if (vaultKey === undefined) throw vaultMissing();
  return (record) => {
    if (record.vault === undefined) return undefined;
    const plaintext = open(vaultKey, record.id, record.vault);
    if (plaintext === undefined) throw sealedWithAnotherVaultKey(record.id);
    return plaintext;
  };
}
