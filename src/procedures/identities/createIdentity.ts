import { transact } from '../../store/db.js';
import { insertIdentity } from '../../store/identities.js';
import type { Ctx } from '../context.js';
import { ratelimitDefs, type RatelimitInput } from '../keys/fields.js';
import { identityMetaJson } from './view.js';

export function createIdentity(input: { externalId: string; meta?: Record<string, unknown>; ratelimits?: RatelimitInput[] }, ctx: Ctx): { identityId: string } {
  const fields = { ratelimits: ratelimitDefs(input.ratelimits ?? [], [], ctx.nowMs), ...(input.meta === undefined ? {} : { metaJson: identityMetaJson(input.meta) }) };
  const identity = transact(() => insertIdentity(ctx.principal.workspaceId, input.externalId, fields, ctx.nowMs));
  return { identityId: identity.id };
}
