import { requireSomewhere } from '../../auth/require.js';
import { analyticsNotConfigured } from '../../errors/errors.js';
import type { Ctx } from '../../request/context.js';

/** keyward records no events yet: after the root key's permission (403 first), 412 analytics_not_configured, as Unkey answers without analytics. */
export function getRatelimits(_input: { query: string }, ctx: Ctx): never {
  requireSomewhere(ctx.principal, 'ratelimits', '<namespaceId>', 'read_analytics');
  throw analyticsNotConfigured('rate-limit');
}
