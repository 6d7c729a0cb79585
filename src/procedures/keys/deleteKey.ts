import { removeKey } from '../../store/keys.js';
import type { Ctx } from '../../request/context.js';
import { keyFor } from '../../lookups/keys.js';

/** Hard delete: the key verifies as NOT_FOUND from the next request on (`permanent` is accepted for SDK compatibility; every delete is permanent). */
export async function deleteKey(input: { keyId: string; permanent: boolean }, ctx: Ctx): Promise<Record<string, never>> {
  await ctx.transact(() => removeKey(keyFor(ctx, input.keyId, 'delete_key')));
  return {};
}
