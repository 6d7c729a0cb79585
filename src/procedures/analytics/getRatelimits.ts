import { requireSomewhere } from '../../auth/require.js';
import { analyticsNotConfigured } from '../../errors/errors.js';
import type { Ctx } from '../../request/context.js';
import { scopeIds } from '../../analytics/scope.js';

/**
 * Unkey's analytics query over rate-limit decisions (docs/analytics.md): the rows of the root
 * key's workspace, and of the namespaces it may `read_analytics` (`ratelimit.*.read_analytics`: all).
 */
export function getRatelimits(input: { query: string }, ctx: Ctx): Promise<Record<string, unknown>[]> {
  requireSomewhere(ctx.principal, 'ratelimits', '<namespaceId>', 'read_analytics');
  if (ctx.analytics === undefined) throw analyticsNotConfigured('rate-limit');
  const ids = scopeIds(ctx.principal.analyticsScope('ratelimits'));
  return ctx.analytics.query(input.query, { workspaceId: ctx.principal.workspaceId, kind: 'ratelimits', ...(ids === undefined ? {} : { ids }) }, ctx.principal.rootKeyId);
}
