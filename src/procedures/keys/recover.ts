import { requirePermission } from '../../auth/require.js';
import { open } from '../../domain/vault.js';
import { ApiError } from '../../errors/apiError.js';
import type { KeyRecord } from '../../store/records.js';
import type { Ctx } from '../context.js';

export function vaultMissing(): ApiError {
  return new ApiError('precondition_failed', 'Recoverable keys need a vault: start keyward with KEYWARD_VAULT_KEY set to 32 random bytes, base64-encoded.');
}

/** For decrypt:true — checks decrypt_key and the vault, returns record → plaintext (if recoverable). */
export function decryptPlaintext(ctx: Ctx, apiId: string): (record: KeyRecord) => string | undefined {
  requirePermission(ctx.principal, 'apis', apiId, 'decrypt_key');
  const vaultKey = ctx.vaultKey;
  if (vaultKey === undefined) throw vaultMissing();
  return (record) => {
    if (record.vault === undefined) return undefined;
    const plaintext = open(vaultKey, record.id, record.vault);
    if (plaintext === undefined) {
      throw new ApiError('precondition_failed', `The plaintext of key '${record.id}' was sealed with another vault key: KEYWARD_VAULT_KEY must be the key it was created with.`);
    }
    return plaintext;
  };
}
