import { permissionFor } from '../../lookups/permissions.js';
import type { Ctx } from '../../request/context.js';
import { permissionView, type PermissionView } from '../../views/permissions.js';

export function getPermission(input: { permission: string }, ctx: Ctx): PermissionView {
  return permissionView(permissionFor(ctx, input.permission));
}
