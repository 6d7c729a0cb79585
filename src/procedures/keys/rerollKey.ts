import { requirePermission } from '../../auth/require.js';
import { newId } from '../../domain/ids.js';
import { generateKey } from '../../domain/keyMaterial.js';
import { seal } from '../../domain/vault.js';
import { keyHashBytes, readCredits, saveKey, writeCredits } from '../../store/keys.js';
import { MAX_EXPIRES_MS } from '../../schemas/keys.js';
import type { KeyRecord } from '../../store/records.js';
import type { Ctx } from '../../request/context.js';
import { keyFor } from '../../lookups/keys.js';
import { vaultMissing } from '../../errors/errors.js';

const MINUTE_MS = 60_000;

/**
 * A new key with the old one's settings (name, meta, identity, expiry, credits, limits,
 * roles, permissions, recoverability, prefix and length; its limits get ids of their own,
 * as every limit of every key has); the old key expires
 * `expiration` ms from now, rounded up to a whole minute (0: at once), and no later than
 * it would have anyway, nor than MAX_EXPIRES_MS.
 */
export async function rerollKey(input: { keyId: string; expiration: number }, ctx: Ctx): Promise<{ keyId: string; key: string }> {
  return ctx.transact(() => {
    const old = keyFor(ctx, input.keyId, 'create_key');
    if (old.vault !== undefined) {
      requirePermission(ctx.principal, 'apis', old.apiId, 'encrypt_key');
      if (ctx.vaultKey === undefined) throw vaultMissing();
    }
    const { key, start } = generateKey(old.prefix, old.byteLength);
    const ratelimits = old.ratelimits.map((r) => ({ ...r, id: newId('rl', ctx.nowMs) }));
    const fresh: KeyRecord = { ...old, id: newId('key', ctx.nowMs), hash: keyHashBytes(key).toString('base64'), start, createdAtMs: ctx.nowMs, ratelimits };
    delete fresh.updatedAtMs;
    if (old.vault !== undefined && ctx.vaultKey !== undefined) fresh.vault = seal(ctx.vaultKey, fresh.id, key);
    saveKey(fresh, undefined);
    const credits = readCredits(old.id, ctx.nowMs);
    if (credits !== undefined) writeCredits(fresh.id, credits);
    const expiresAtMs = input.expiration === 0 ? ctx.nowMs - 1 : Math.ceil((ctx.nowMs + input.expiration) / MINUTE_MS) * MINUTE_MS;
    // Never past the latest `expires` a key may have, so what getKey shows can be written back.
    saveKey({ ...old, expiresAtMs: Math.min(old.expiresAtMs ?? MAX_EXPIRES_MS, expiresAtMs, MAX_EXPIRES_MS), updatedAtMs: ctx.nowMs }, old);
    return { keyId: fresh.id, key };
  });
}
