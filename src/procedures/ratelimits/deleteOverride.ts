import { ApiError } from '../../errors/apiError.js';
import { removeOverride } from '../../store/ratelimits.js';
import type { Ctx } from '../context.js';
import { existingNamespace } from './namespace.js';

/** Deletes the override stored under exactly this identifier (a pattern is passed literally). */
export function deleteOverride(input: { namespace: string; identifier: string }, ctx: Ctx): Record<string, never> {
  const ns = existingNamespace(ctx, input.namespace, 'delete_override');
  if (!removeOverride(ns, input.identifier)) throw new ApiError('ratelimit_override_not_found', `No override is stored for the identifier '${input.identifier.slice(0, 128)}' in namespace '${input.namespace}'.`);
  return {};
}
