import { requirePermission } from '../../auth/require.js';
import { ensurePermissions, missingPermissions, saveRolePermissions } from '../../store/permissions.js';
import type { Ctx } from '../../request/context.js';
import { roleFor } from '../../lookups/permissions.js';
import { permissionView, type PermissionView } from '../../views/permissions.js';

/** Replaces the role's permissions (missing slugs are created); returns the resulting set. */
export async function setRolePermissions(input: { roleId: string; permissions: string[] }, ctx: Ctx): Promise<PermissionView[]> {
  const ws = ctx.principal.workspaceId;
  return ctx.transact(() => {
    const role = roleFor(ctx, input.roleId);
    if (missingPermissions(ws, input.permissions).length > 0) requirePermission(ctx.principal, 'rbac', undefined, 'create_permission');
    const permissions = ensurePermissions(ws, input.permissions, ctx.nowMs).records;
    saveRolePermissions(role, permissions);
    return permissions.map(permissionView);
  });
}
