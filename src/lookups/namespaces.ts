// Namespace resolution shared by the ratelimits procedures, with their permission checks.
import { requirePermission } from '../auth/require.js';
import { namespaceNotFound } from '../errors/errors.js';
import type { Ctx } from '../request/context.js';
import { ensureNamespace, findNamespace } from '../store/ratelimits.js';
import type { NamespaceRecord } from '../store/records.js';

/**
 * For limit/multiLimit: the namespace once `limit` on it is allowed, or undefined for a new one
 * once creating it is: ratelimits.*.create_namespace, and ratelimits.*.limit (no grant can
 * name the id of a namespace that does not exist yet). Creates nothing.
 */
function limitableNamespace(ctx: Ctx, nameOrId: string): NamespaceRecord | undefined {
  const ns = findNamespace(ctx.principal.workspaceId, nameOrId);
  if (ns === undefined) {
    requirePermission(ctx.principal, 'ratelimits', undefined, 'create_namespace');
    requirePermission(ctx.principal, 'ratelimits', undefined, 'limit');
    return undefined;
  }
  requirePermission(ctx.principal, 'ratelimits', ns.id, 'limit');
  return ns;
}

/**
 * The namespaces of a limit/multiLimit call checked, and the new ones created (in one
 * transaction) — only once every one of them is allowed, so a refused call (403) leaves no
 * namespace behind.
 */
export async function namespacesForLimit(ctx: Ctx, namesOrIds: readonly string[]): Promise<void> {
  const found = namesOrIds.map((n) => limitableNamespace(ctx, n));
  const missing = namesOrIds.filter((_, i) => found[i] === undefined);
  if (missing.length > 0) await ctx.transact(() => missing.forEach((name) => ensureNamespace(ctx.principal.workspaceId, name, ctx.nowMs)));
}

/** For the override procedures: the namespace must exist; then `action` on it. */
export function existingNamespace(ctx: Ctx, nameOrId: string, action: string): NamespaceRecord {
  const ns = findNamespace(ctx.principal.workspaceId, nameOrId);
  if (ns === undefined) throw namespaceNotFound(nameOrId);
  requirePermission(ctx.principal, 'ratelimits', ns.id, action);
  return ns;
}
