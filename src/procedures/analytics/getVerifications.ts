import { requireSomewhere } from '../../auth/require.js';
import { analyticsNotConfigured } from '../../errors/errors.js';
import type { Ctx } from '../../request/context.js';
import { scopeIds } from '../../analytics/scope.js';

/**
 * Unkey's analytics query over key verifications (docs/analytics.md): the rows of the
 * root key's workspace, and of the APIs it may `read_analytics` (`api.*.read_analytics`: all).
 */
export function getVerifications(input: { query: string }, ctx: Ctx): Promise<Record<string, unknown>[]> {
  requireSomewhere(ctx.principal, 'apis', '<apiId>', 'read_analytics');
  if (ctx.analytics === undefined) throw analyticsNotConfigured('key verification');
  const ids = scopeIds(ctx.principal.analyticsScope('apis'));
  return ctx.analytics.query(input.query, { workspaceId: ctx.principal.workspaceId, kind: 'verifications', ...(ids === undefined ? {} : { ids }) }, ctx.principal.rootKeyId);
}
