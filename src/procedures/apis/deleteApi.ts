import { markApiDeleted } from '../../store/apis.js';
import type { Ctx } from '../context.js';
import { apiNotFound } from './getApi.js';

export function deleteApi(input: { apiId: string }, ctx: Ctx): Record<string, never> {
  if (!markApiDeleted(ctx.principal.workspaceId, input.apiId, ctx.nowMs)) throw apiNotFound(input.apiId);
  return {};
}
