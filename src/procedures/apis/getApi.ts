import { apiNotFound } from '../../errors/errors.js';
import type { Ctx } from '../../request/context.js';
import { findApi } from '../../store/apis.js';

export function getApi(input: { apiId: string }, ctx: Ctx): { id: string; name: string } {
  const api = findApi(ctx.principal.workspaceId, input.apiId);
  if (api === undefined) throw apiNotFound(input.apiId);
  return { id: api.id, name: api.name };
}
