import { insertPermission } from '../../store/permissions.js';
import type { Ctx } from '../../request/context.js';
import { permissionView, type PermissionView } from '../../views/permissions.js';

export async function createPermission(input: { name: string; slug: string; description?: string }, ctx: Ctx): Promise<PermissionView & { permissionId: string }> {
  const record = await ctx.transact(() => insertPermission(ctx.principal.workspaceId, input, ctx.nowMs));
  return { permissionId: record.id, ...permissionView(record) };
}
