// Permission and role objects as the permissions namespace and the keys.*Roles /
// keys.*Permissions procedures return them (Unkey's Permission and Role).
import { findPermission } from '../store/permissions.js';
import type { PermissionRecord, RoleRecord } from '../store/records.js';

export interface PermissionView {
  id: string;
  name: string;
  slug: string;
  description?: string;
}

export interface RoleView {
  id: string;
  name: string;
  description?: string;
  permissions?: PermissionView[];
}

export function permissionView(p: PermissionRecord): PermissionView {
  const view: PermissionView = { id: p.id, name: p.name, slug: p.slug };
  if (p.description !== undefined) view.description = p.description;
  return view;
}

export function roleView(role: RoleRecord): RoleView {
  const view: RoleView = { id: role.id, name: role.name };
  if (role.description !== undefined) view.description = role.description;
  const permissions = role.permissions.map((slug) => findPermission(role.workspaceId, slug)).filter((p): p is PermissionRecord => p !== undefined);
  if (permissions.length > 0) view.permissions = permissions.map(permissionView);
  return view;
}
