import { deletePermissionEverywhere } from '../../store/cascades.js';
import type { Ctx } from '../../request/context.js';
import { permissionFor } from '../../lookups/permissions.js';

/** Deletes the permission, and takes it off every role: no key holds it from the commit on; the keys' links to it go in the background. */
export async function deletePermission(input: { permission: string }, ctx: Ctx): Promise<Record<string, never>> {
  const unlinking = await ctx.transact(() => deletePermissionEverywhere(permissionFor(ctx, input.permission)));
  void ctx.jobs.unlink(unlinking);
  return {};
}
