import { requirePermission } from '../../auth/require.js';
import { ensurePermissions, insertRole, missingPermissions } from '../../store/permissions.js';
import type { Ctx } from '../../request/context.js';
import { roleView, type RoleView } from '../../views/permissions.js';

export async function createRole(input: { name: string; description?: string; permissions?: string[] }, ctx: Ctx): Promise<RoleView & { roleId: string }> {
  const ws = ctx.principal.workspaceId;
  const slugs = input.permissions ?? [];
  if (slugs.length > 0) requirePermission(ctx.principal, 'rbac', undefined, 'add_permission_to_role');
  const role = await ctx.transact(() => {
    if (missingPermissions(ws, slugs).length > 0) requirePermission(ctx.principal, 'rbac', undefined, 'create_permission');
    return insertRole(ws, input, ensurePermissions(ws, slugs, ctx.nowMs).records, ctx.nowMs);
  });
  return { roleId: role.id, ...roleView(role) };
}
