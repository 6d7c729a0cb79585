import { ApiError } from '../../errors/apiError.js';
import { findPermission } from '../../store/permissions.js';
import type { PermissionRecord } from '../../store/records.js';
import type { Ctx } from '../context.js';
import { permissionView, type PermissionView } from './view.js';

/** The permission of this workspace with this id or slug, or 404 permission_not_found. */
export function permissionFor(ctx: Ctx, idOrSlug: string): PermissionRecord {
  const record = findPermission(ctx.principal.workspaceId, idOrSlug);
  if (record === undefined) throw new ApiError('permission_not_found', `The permission '${idOrSlug}' (id or slug) does not exist in this workspace.`);
  return record;
}

export function getPermission(input: { permission: string }, ctx: Ctx): PermissionView {
  return permissionView(permissionFor(ctx, input.permission));
}
