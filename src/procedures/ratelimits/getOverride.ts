import { limiter } from '../../engine/native.js';
import { ApiError } from '../../errors/apiError.js';
import type { Ctx } from '../context.js';
import { existingNamespace } from './namespace.js';

export interface OverrideView {
  overrideId: string;
  identifier: string;
  limit: number;
  duration: number;
}

/** The override that applies to the identifier: exact first, else the longest matching pattern. */
export function getOverride(input: { namespace: string; identifier: string }, ctx: Ctx): OverrideView {
  const ns = existingNamespace(ctx, input.namespace, 'read_override');
  const found = limiter.findOverride(ns.id, input.identifier);
  if (found === undefined) throw new ApiError('ratelimit_override_not_found', `No override in namespace '${input.namespace}' matches the identifier '${input.identifier.slice(0, 128)}'.`);
  return JSON.parse(found) as OverrideView;
}
