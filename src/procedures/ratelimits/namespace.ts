// Namespace resolution shared by the ratelimits procedures, with their permission checks.
import { requirePermission } from '../../auth/require.js';
import { ApiError } from '../../errors/apiError.js';
import { ensureNamespace, findNamespace } from '../../store/ratelimits.js';
import type { NamespaceRecord } from '../../store/records.js';
import type { Ctx } from '../context.js';

/** For limit/multiLimit: created on first use (needs ratelimits.*.create_namespace). */
export function namespaceForLimit(ctx: Ctx, nameOrId: string): NamespaceRecord {
  const ws = ctx.principal.workspaceId;
  let ns = findNamespace(ws, nameOrId);
  if (ns === undefined) {
    requirePermission(ctx.principal, 'ratelimits', undefined, 'create_namespace');
    ns = ensureNamespace(ws, nameOrId, ctx.nowMs);
  }
  requirePermission(ctx.principal, 'ratelimits', ns.id, 'limit');
  return ns;
}

/** For the override procedures: the namespace must exist; then `action` on it. */
export function existingNamespace(ctx: Ctx, nameOrId: string, action: string): NamespaceRecord {
  const ns = findNamespace(ctx.principal.workspaceId, nameOrId);
  if (ns === undefined) throw new ApiError('ratelimit_namespace_not_found', `The rate-limit namespace '${nameOrId}' does not exist in this workspace; it is created by its first ratelimits.limit call.`);
  requirePermission(ctx.principal, 'ratelimits', ns.id, action);
  return ns;
}
