import { insertApi } from '../../store/apis.js';
import type { Ctx } from '../../request/context.js';

export function createApi(input: { name: string }, ctx: Ctx): { apiId: string; id: string; name: string } {
  const api = insertApi(ctx, ctx.principal.workspaceId, input.name, ctx.nowMs);
  return { apiId: api.id, id: api.id, name: api.name };
}
