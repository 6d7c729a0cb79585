import { ApiError } from '../../errors/apiError.js';
import { findApi } from '../../store/apis.js';
import type { Ctx } from '../context.js';

export function apiNotFound(apiId: string): ApiError {
  return new ApiError('api_not_found', `The API '${apiId}' does not exist in this workspace.`);
}

export function getApi(input: { apiId: string }, ctx: Ctx): { id: string; name: string } {
  const api = findApi(ctx.principal.workspaceId, input.apiId);
  if (api === undefined) throw apiNotFound(input.apiId);
  return { id: api.id, name: api.name };
}
