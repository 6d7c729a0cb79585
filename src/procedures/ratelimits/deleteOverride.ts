import { overrideNotStored } from '../../errors/errors.js';
import { removeOverride } from '../../store/ratelimits.js';
import type { Ctx } from '../../request/context.js';
import { existingNamespace } from '../../lookups/namespaces.js';

/** Deletes the override stored under exactly this identifier (a pattern is passed literally). */
export function deleteOverride(input: { namespace: string; identifier: string }, ctx: Ctx): Record<string, never> {
  const ns = existingNamespace(ctx, input.namespace, 'delete_override');
  if (!removeOverride(ctx, ns, input.identifier)) throw overrideNotStored(input.namespace, input.identifier);
  return {};
}
