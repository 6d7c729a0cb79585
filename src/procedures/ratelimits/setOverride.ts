import { upsertOverride } from '../../store/ratelimits.js';
import type { Ctx } from '../../request/context.js';
import { existingNamespace } from '../../lookups/namespaces.js';

/** Upsert: the next limit call for a matching identifier uses this limit and duration. */
export async function setOverride(input: { namespace: string; identifier: string; limit: number; duration: number }, ctx: Ctx): Promise<{ overrideId: string }> {
  const ns = existingNamespace(ctx, input.namespace, 'set_override');
  const record = await ctx.transact(() => upsertOverride(ns, input.identifier, input.limit, input.duration, ctx.nowMs));
  return { overrideId: record.id };
}
