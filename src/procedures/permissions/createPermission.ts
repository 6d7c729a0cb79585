import { insertPermission } from '../../store/permissions.js';
import type { Ctx } from '../../request/context.js';
import { permissionView, type PermissionView } from '../../views/permissions.js';

export function createPermission(input: { name: string; slug: string; description?: string }, ctx: Ctx): PermissionView & { permissionId: string } {
  const record = ctx.transact(() => insertPermission(ctx.principal.workspaceId, input, ctx.nowMs));
  return { permissionId: record.id, ...permissionView(record) };
}
