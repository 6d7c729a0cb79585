import { decryptPlaintext, keyFor } from '../../lookups/keys.js';
import type { Ctx } from '../../request/context.js';
import { keyView, type KeyView } from '../../views/keys.js';

export function getKey(input: { keyId: string; decrypt: boolean }, ctx: Ctx): KeyView {
  const key = keyFor(ctx, input.keyId, 'read_key');
  const view = keyView(key, ctx.nowMs);
  if (input.decrypt) {
    const plaintext = decryptPlaintext(ctx, key.apiId)(key);
    if (plaintext !== undefined) view.plaintext = plaintext;
  }
  return view;
}
