// A permission or role of the root key's workspace, by id or by slug / name (the rbac
// permission each procedure needs is a route rule, checked before).
import { permissionNotFound, roleNotFound } from '../errors/errors.js';
import type { Ctx } from '../request/context.js';
import { findPermission, findRole } from '../store/permissions.js';
import type { PermissionRecord, RoleRecord } from '../store/records.js';

/** The permission of this workspace with this id or slug, or 404 permission_not_found. */
export function permissionFor(ctx: Ctx, idOrSlug: string): PermissionRecord {
  const record = findPermission(ctx.principal.workspaceId, idOrSlug);
  if (record === undefined) throw permissionNotFound(idOrSlug);
  return record;
}

/** The role of this workspace with this id or name, or 404 role_not_found. */
export function roleFor(ctx: Ctx, idOrName: string): RoleRecord {
  const record = findRole(ctx.principal.workspaceId, idOrName);
  if (record === undefined) throw roleNotFound(idOrName);
  return record;
}
