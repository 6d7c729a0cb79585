import type { Outcome, Served } from '../../engine/hotCalls.js';
import { namespacesForLimit } from '../../lookups/namespaces.js';
import type { Ctx } from '../../request/context.js';
import { servedOrFullWay } from '../../request/settle.js';

export interface LimitInput {
  namespace: string;
  identifier: string;
  limit: number;
  duration: number;
  cost: number;
}

/**
 * The full way: the namespace is checked (403) or created, then the validated input is
 * handed to the engine; a refusal is data (success:false), not an error. In cluster mode a
 * limit only Redis can decide (near it) is settled with the cluster.
 */
export async function limit(input: LimitInput, ctx: Ctx): Promise<Served> {
  await namespacesForLimit(ctx, [input.namespace]);
  // Allowed there, so the root key's scope covers the namespace.
  const scope = ctx.principal.limitScope() ?? '';
  const request = Buffer.from(JSON.stringify(input));
  const again = (): Outcome => ctx.hot.limit(request, ctx.principal.workspaceId, scope, ctx.nowMs, true);
  return ctx.settle(again(), again);
}

/**
 * Straight from the body bytes (Route.fromBody), for a root key that may limit somewhere;
 * undefined (nothing done) when the engine declines them: a body it does not read, a
 * namespace that does not exist yet, or one the root key may not limit in — the full way
 * then handles it (and answers the 403).
 */
export function limitFromBody(body: Uint8Array, ctx: Ctx): Served | undefined {
  const scope = ctx.principal.limitScope();
  return scope === null ? undefined : servedOrFullWay(ctx.hot.limit(body, ctx.principal.workspaceId, scope, ctx.nowMs, false));
}
