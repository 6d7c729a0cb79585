import { requirePermission, requireSomewhere } from '../../auth/require.js';
import { ApiError } from '../../errors/apiError.js';
import { findKey } from '../../store/keys.js';
import type { KeyRecord } from '../../store/records.js';
import type { Ctx } from '../context.js';
import { decryptPlaintext } from './recover.js';
import { keyView, type KeyView } from './view.js';

export function keyNotFound(keyId: string): ApiError {
  return new ApiError('key_not_found', `The key '${keyId}' does not exist in this workspace.`);
}

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

export function getKey(input: { keyId: string; decrypt: boolean }, ctx: Ctx): KeyView {
  const key = keyFor(ctx, input.keyId, 'read_key');
  const view = keyView(key, ctx.nowMs);
  if (input.decrypt) {
    const plaintext = decryptPlaintext(ctx, key.apiId)(key);
    if (plaintext !== undefined) view.plaintext = plaintext;
  }
  return view;
}
