import { deleteRoleEverywhere } from '../../store/cascades.js';
import { idxGet } from '../../store/indexes.js';
import { IDX } from '../../store/records.js';
import type { Ctx } from '../../request/context.js';
import { roleFor } from '../../lookups/permissions.js';

/** Deletes the role (its permissions stay): no key holds it from the commit on; the keys' links to it go in the background. */
export async function deleteRole(input: { role: string }, ctx: Ctx): Promise<Record<string, never>> {
  const ws = ctx.principal.workspaceId;
  const unlinking = await ctx.transact(() => deleteRoleEverywhere(roleFor(ctx, input.role), (slug) => idxGet(IDX.permSlug(ws, slug))));
  void ctx.jobs.unlink(unlinking);
  return {};
}
