import { requirePermission } from '../../auth/require.js';
import { newId } from '../../domain/ids.js';
import { generateKey } from '../../domain/keyMaterial.js';
import { seal } from '../../domain/vault.js';
import { draftKey, insertKey, type NewKeyFields } from '../../edits/newKey.js';
import { apiNotFound, vaultMissing } from '../../errors/errors.js';
import { findApi } from '../../store/apis.js';
import { keyHashBytes } from '../../store/keys.js';
import type { Ctx } from '../../request/context.js';

export interface CreateKeyInput extends NewKeyFields {
  apiId: string;
  prefix?: string;
  byteLength: number;
  recoverable: boolean;
}

export async function createKey(input: CreateKeyInput, ctx: Ctx): Promise<{ keyId: string; key: string }> {
  const ws = ctx.principal.workspaceId;
  if (input.recoverable) {
    requirePermission(ctx.principal, 'apis', input.apiId, 'encrypt_key');
    if (ctx.vaultKey === undefined) throw vaultMissing();
  }
  const { key, start } = generateKey(input.prefix, input.byteLength);
  const keyId = newId('key', ctx.nowMs);
  const identity = { id: keyId, apiId: input.apiId, workspaceId: ws, hash: keyHashBytes(key).toString('base64'), start, byteLength: input.byteLength, prefix: input.prefix };
  const draft = draftKey(identity, input, ctx.nowMs);
  if (input.recoverable && ctx.vaultKey !== undefined) draft.record.vault = seal(ctx.vaultKey, keyId, key);
  await ctx.transact(() => {
    if (findApi(ws, input.apiId) === undefined) throw apiNotFound(input.apiId);
    insertKey(draft, 'existing', ctx.nowMs);
  });
  return { keyId, key };
}
