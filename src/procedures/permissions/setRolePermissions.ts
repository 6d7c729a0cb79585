import { requirePermission } from '../../auth/require.js';
import { transact } from '../../store/db.js';
import { ensurePermissions, missingPermissions, saveRolePermissions } from '../../store/permissions.js';
import type { Ctx } from '../context.js';
import { roleFor } from './getRole.js';
import { permissionView, type PermissionView } from './view.js';

/** Replaces the role's permissions (missing slugs are created); returns the resulting set. */
export function setRolePermissions(input: { roleId: string; permissions: string[] }, ctx: Ctx): PermissionView[] {
  const ws = ctx.principal.workspaceId;
  return transact(() => {
    const role = roleFor(ctx, input.roleId);
    if (missingPermissions(ws, input.permissions).length > 0) requirePermission(ctx.principal, 'rbac', undefined, 'create_permission');
    const permissions = ensurePermissions(ws, input.permissions, ctx.nowMs).records;
    saveRolePermissions(role, permissions);
    return permissions.map(permissionView);
  });
}
