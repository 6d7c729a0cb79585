import { overrideNotStored } from '../../errors/errors.js';
import { removeOverride } from '../../store/ratelimits.js';
import type { Ctx } from '../../request/context.js';
import { existingNamespace } from '../../lookups/namespaces.js';

/** Deletes the override stored under exactly this identifier (a pattern is passed literally). */
export async function deleteOverride(input: { namespace: string; identifier: string }, ctx: Ctx): Promise<Record<string, never>> {
  const ns = existingNamespace(ctx, input.namespace, 'delete_override');
  if (!(await ctx.transact(() => removeOverride(ns, input.identifier)))) throw overrideNotStored(input.namespace, input.identifier);
  return {};
}
