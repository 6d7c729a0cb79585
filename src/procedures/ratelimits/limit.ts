import { RawBody } from '../../domain/rawJson.js';
import { limiter } from '../../engine/native.js';
import { noteHotEffect } from '../../store/durability.js';
import type { Ctx } from '../context.js';
import { namespaceForLimit } from './namespace.js';

export interface LimitInput {
  namespace: string;
  identifier: string;
  limit: number;
  duration: number;
  cost: number;
}

/** One synchronous native call; a refusal is data (success:false), not an error. */
export function limit(input: LimitInput, ctx: Ctx): RawBody {
  const ns = namespaceForLimit(ctx, input.namespace);
  const out = limiter.limit(ns.id, input.identifier, input.limit, input.duration, input.cost, ctx.nowMs, ctx.requestId);
  noteHotEffect(out.charCodeAt(0));
  return new RawBody(out.slice(1));
}
