import type { Outcome, Served } from '../../engine/hotCalls.js';
import { namespacesForLimit } from '../../lookups/namespaces.js';
import type { Ctx } from '../../request/context.js';
import { servedOrFullWay } from '../../request/settle.js';
import type { LimitInput } from './limit.js';

/**
 * The full way, all or nothing: every namespace is checked (403) or created, then the
 * validated input is handed to the engine; when any item is refused, no item consumes
 * anything.
 */
export async function multiLimit(input: LimitInput[], ctx: Ctx): Promise<Served> {
  await namespacesForLimit(ctx, input.map((item) => item.namespace));
  // Allowed there, so the root key's scope covers every namespace.
  const scope = ctx.principal.limitScope() ?? '';
  const request = Buffer.from(JSON.stringify(input));
  const again = (): Outcome => ctx.hot.multiLimit(request, ctx.principal.workspaceId, scope, ctx.nowMs, true);
  return ctx.settle(again(), again);
}

/** Straight from the body bytes (Route.fromBody): declined as limitFromBody declines. */
export function multiLimitFromBody(body: Uint8Array, ctx: Ctx): Served | undefined {
  const scope = ctx.principal.limitScope();
  return scope === null ? undefined : servedOrFullWay(ctx.hot.multiLimit(body, ctx.principal.workspaceId, scope, ctx.nowMs, false));
}
