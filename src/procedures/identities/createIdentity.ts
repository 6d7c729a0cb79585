import { insertIdentity } from '../../store/identities.js';
import type { Ctx } from '../../request/context.js';
import { ratelimitDefs, type RatelimitInput } from '../../fields/keys.js';
import { identityMetaJson } from '../../fields/meta.js';

export async function createIdentity(input: { externalId: string; meta?: Record<string, unknown>; ratelimits?: RatelimitInput[] }, ctx: Ctx): Promise<{ identityId: string }> {
  const fields = { ratelimits: ratelimitDefs(input.ratelimits ?? [], [], ctx.nowMs), ...(input.meta === undefined ? {} : { metaJson: identityMetaJson(input.meta) }) };
  const identity = await ctx.transact(() => insertIdentity(ctx.principal.workspaceId, input.externalId, fields, ctx.nowMs));
  return { identityId: identity.id };
}
