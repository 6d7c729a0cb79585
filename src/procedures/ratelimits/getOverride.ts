import { native } from '../../engine/native.js';
import { noOverrideMatches } from '../../errors/errors.js';
import { existingNamespace } from '../../lookups/namespaces.js';
import type { Ctx } from '../../request/context.js';
import type { OverrideView } from '../../views/ratelimits.js';

/** The override that applies to the identifier: exact first, else the longest matching pattern. */
export function getOverride(input: { namespace: string; identifier: string }, ctx: Ctx): OverrideView {
  const ns = existingNamespace(ctx, input.namespace, 'read_override');
  const found = native.findOverride(ns.id, input.identifier);
  if (found === undefined) throw noOverrideMatches(input.namespace, input.identifier);
  return JSON.parse(found) as OverrideView;
}
