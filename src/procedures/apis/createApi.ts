import { insertApi } from '../../store/apis.js';
import type { Ctx } from '../../request/context.js';

export async function createApi(input: { name: string }, ctx: Ctx): Promise<{ apiId: string; id: string; name: string }> {
  const api = await ctx.transact(() => insertApi(ctx.principal.workspaceId, input.name, ctx.nowMs));
  return { apiId: api.id, id: api.id, name: api.name };
}
