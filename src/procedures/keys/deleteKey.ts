import { transact } from '../../store/db.js';
import { removeKey } from '../../store/keys.js';
import type { Ctx } from '../context.js';
import { keyFor } from './getKey.js';

/** Hard delete: the key verifies as NOT_FOUND from the next request on (`permanent` is accepted for SDK compatibility; every delete is permanent). */
export function deleteKey(input: { keyId: string; permanent: boolean }, ctx: Ctx): Record<string, never> {
  transact(() => removeKey(keyFor(ctx, input.keyId, 'delete_key')));
  return {};
}
