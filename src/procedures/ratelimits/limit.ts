import type { RawBody } from '../../domain/rawJson.js';
import { limiter } from '../../engine/native.js';
import type { NamespaceRecord } from '../../store/records.js';
import type { Ctx } from '../context.js';
import { hotBody } from '../hotBody.js';
import { namespacesForLimit } from './namespace.js';

export interface LimitInput {
  namespace: string;
  identifier: string;
  limit: number;
  duration: number;
  cost: number;
}

/** One synchronous native call; a refusal is data (success:false), not an error. */
export function limit(input: LimitInput, ctx: Ctx): RawBody {
  const [ns] = namespacesForLimit(ctx, [input.namespace]) as [NamespaceRecord];
  return hotBody(limiter.limit(ns.id, input.identifier, input.limit, input.duration, input.cost, ctx.nowMs, ctx.requestId));
}

/**
 * The same call read by the engine straight from the body bytes (Route.fromBody), for a root
 * key that may limit in every namespace or in some by id; undefined (nothing done) when the
 * body is not in its plain form, names no existing namespace by its name, or names one the
 * root key may not limit in — the full way then handles it (and answers the 403).
 */
export function limitFromBody(body: Uint8Array, ctx: Ctx): RawBody | undefined {
  const scope = ctx.principal.limitScope();
  if (scope === null) return undefined;
  const out = limiter.limitBody(ctx.principal.workspaceId, scope, body, ctx.nowMs);
  return out === undefined ? undefined : hotBody(out);
}
