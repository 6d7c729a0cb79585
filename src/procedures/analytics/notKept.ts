import type { Resource } from '../../auth/permissions.js';
import { requireSomewhere } from '../../auth/require.js';
import { ApiError } from '../../errors/apiError.js';
import type { Ctx } from '../context.js';

/**
 * keyward records no verification or rate-limit events, so the analytics procedures exist
 * only to say so: after the root key's permission (403 first, as for any procedure), 412
 * analytics_not_configured, the answer Unkey gives where analytics are not set up.
 */
export function analyticsNotKept(ctx: Ctx, resource: Resource, what: string): never {
  requireSomewhere(ctx.principal, resource, resource === 'apis' ? '<apiId>' : '<namespaceId>', 'read_analytics');
  throw new ApiError('analytics_not_configured', `keyward keeps no ${what} analytics: it records no events to query. Count what you need from the verifyKey and limit replies, or scrape /metrics.`);
}
