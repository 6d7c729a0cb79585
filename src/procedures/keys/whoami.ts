import { requirePermission } from '../../auth/require.js';
import { keyStringNotFound } from '../../errors/errors.js';
import { requireKeyAction } from '../../lookups/keys.js';
import type { Ctx } from '../../request/context.js';
import { findKeyByPlaintext } from '../../store/keys.js';
import { keyView, type KeyView } from '../../views/keys.js';

export function whoami(input: { key: string }, ctx: Ctx): KeyView {
  requireKeyAction(ctx, 'read_key');
  const key = findKeyByPlaintext(ctx.principal.workspaceId, input.key);
  if (key === undefined) throw keyStringNotFound();
  requirePermission(ctx.principal, 'apis', key.apiId, 'read_key');
  return keyView(key, ctx.nowMs);
}
