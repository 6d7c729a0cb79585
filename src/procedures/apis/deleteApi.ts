import { markApiDeleted } from '../../store/apis.js';
import { purgeApiInBackground } from '../../workers/pool.js';
import type { Ctx } from '../context.js';
import { apiNotFound } from './getApi.js';

/** The API and its keys are not found from the next request on; the keys are removed in the background. */
export function deleteApi(input: { apiId: string }, ctx: Ctx): Record<string, never> {
  if (!markApiDeleted(ctx.principal.workspaceId, input.apiId, ctx.nowMs)) throw apiNotFound(input.apiId);
  void purgeApiInBackground(input.apiId);
  return {};
}
