import { requirePermission } from '../../auth/require.js';
import { transact } from '../../store/db.js';
import { ensurePermissions, insertRole, missingPermissions } from '../../store/permissions.js';
import type { Ctx } from '../context.js';
import { roleView, type RoleView } from './view.js';

export function createRole(input: { name: string; description?: string; permissions?: string[] }, ctx: Ctx): RoleView & { roleId: string } {
  const ws = ctx.principal.workspaceId;
  const slugs = input.permissions ?? [];
  if (slugs.length > 0) requirePermission(ctx.principal, 'rbac', undefined, 'add_permission_to_role');
  const role = transact(() => {
    if (missingPermissions(ws, slugs).length > 0) requirePermission(ctx.principal, 'rbac', undefined, 'create_permission');
    return insertRole(ws, input, ensurePermissions(ws, slugs, ctx.nowMs).records, ctx.nowMs);
  });
  return { roleId: role.id, ...roleView(role) };
}
