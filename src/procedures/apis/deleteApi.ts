import { markApiDeleted } from '../../store/apis.js';
import type { Ctx } from '../../request/context.js';
import { apiNotFound } from '../../errors/errors.js';

/** The API and its keys are not found from the next request on; the keys are removed in the background. */
export async function deleteApi(input: { apiId: string }, ctx: Ctx): Promise<Record<string, never>> {
  if (!(await ctx.transact(() => markApiDeleted(ctx.principal.workspaceId, input.apiId, ctx.nowMs)))) throw apiNotFound(input.apiId);
  void ctx.jobs.purgeApi(input.apiId);
  return {};
}
