import { requirePermission } from '../../auth/require.js';
import { ApiError } from '../../errors/apiError.js';
import { findKeyByPlaintext } from '../../store/keys.js';
import type { Ctx } from '../context.js';
import { requireKeyAction } from './getKey.js';
import { keyView, type KeyView } from './view.js';

export function whoami(input: { key: string }, ctx: Ctx): KeyView {
  requireKeyAction(ctx, 'read_key');
  const key = findKeyByPlaintext(ctx.principal.workspaceId, input.key);
  if (key === undefined) throw new ApiError('key_not_found', 'No key of this workspace matches the given key.');
  requirePermission(ctx.principal, 'apis', key.apiId, 'read_key');
  return keyView(key, ctx.nowMs);
}
