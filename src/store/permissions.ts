// Permissions and roles in the store (records.ts). Inside the caller's transaction.
import { newId } from '../domain/ids.js';
import { assignedRoleNotFound, permissionExists, roleExists } from '../errors/errors.js';
import { getRecord, putRecord } from './db.js';
import { idxDel, idxGet, idxPut } from './indexes.js';
import { IDX, type PermissionRecord, type RoleRecord } from './records.js';
import { settleGone } from './cascades.js';

export function findPermission(workspaceId: string, idOrSlug: string): PermissionRecord | undefined {
  const byId = idOrSlug.startsWith('perm_') ? getRecord<PermissionRecord>('permissions', idOrSlug) : undefined;
  if (byId !== undefined && byId.workspaceId === workspaceId) return byId;
  const id = idxGet(IDX.permSlug(workspaceId, idOrSlug));
  return id === undefined ? undefined : getRecord<PermissionRecord>('permissions', id);
}

export function insertPermission(workspaceId: string, fields: { slug: string; name: string; description?: string }, nowMs: number): PermissionRecord {
  if (idxGet(IDX.permSlug(workspaceId, fields.slug)) !== undefined) {
    throw permissionExists(fields.slug);
  }
  const record: PermissionRecord = { id: newId('perm', nowMs), workspaceId, slug: fields.slug, name: fields.name, createdAtMs: nowMs };
  if (fields.description !== undefined) record.description = fields.description;
  putPermission(record, nowMs);
  return record;
}

/** Writes a permission whose slug is free in its workspace, and its indexes. */
export function putPermission(record: PermissionRecord, nowMs: number): void {
  // A deleted permission of this slug still on some keys is taken off them first (cascades.ts).
  settleGone(record.workspaceId, record.slug, nowMs);
  putRecord('permissions', record.id, record);
  idxPut(IDX.permSlug(record.workspaceId, record.slug), record.id);
  idxPut(IDX.wsPerm(record.workspaceId) + record.id);
}

/** Resolves slugs (or permission ids) to records, creating missing slugs (name = slug). */
export function ensurePermissions(workspaceId: string, slugs: readonly string[], nowMs: number): { records: PermissionRecord[]; created: string[] } {
  const records: PermissionRecord[] = [];
  const created: string[] = [];
  for (const slug of new Set(slugs)) {
    let record = findPermission(workspaceId, slug);
    if (record === undefined) {
      record = insertPermission(workspaceId, { slug, name: slug, description: `Auto-created permission: ${slug}` }, nowMs);
      created.push(slug);
    }
    if (!records.some((r) => r.id === record.id)) records.push(record);
  }
  return { records, created };
}

/** Which of `slugs` do not exist yet (to decide whether create_permission is needed). */
export function missingPermissions(workspaceId: string, slugs: readonly string[]): string[] {
  return [...new Set(slugs)].filter((s) => findPermission(workspaceId, s) === undefined);
}

export function findRole(workspaceId: string, idOrName: string): RoleRecord | undefined {
  const byId = idOrName.startsWith('role_') ? getRecord<RoleRecord>('roles', idOrName) : undefined;
  if (byId !== undefined && byId.workspaceId === workspaceId) return byId;
  const id = idxGet(IDX.roleName(workspaceId, idOrName));
  return id === undefined ? undefined : getRecord<RoleRecord>('roles', id);
}

/** Roles by id or name; every one must exist (404 role_not_found names the first missing). */
export function requireRoles(workspaceId: string, names: readonly string[]): RoleRecord[] {
  const out: RoleRecord[] = [];
  for (const name of names) {
    const role = findRole(workspaceId, name);
    if (role === undefined) throw assignedRoleNotFound(name);
    if (!out.some((r) => r.id === role.id)) out.push(role);
  }
  return out;
}

export function insertRole(workspaceId: string, fields: { name: string; description?: string }, permissions: readonly PermissionRecord[], nowMs: number): RoleRecord {
  if (idxGet(IDX.roleName(workspaceId, fields.name)) !== undefined) {
    throw roleExists(fields.name);
  }
  const record: RoleRecord = { id: newId('role', nowMs), workspaceId, name: fields.name, permissions: [], createdAtMs: nowMs };
  if (fields.description !== undefined) record.description = fields.description;
  return putRole(record, permissions);
}

/** Writes a role whose name is free in its workspace, with `permissions` (its own are replaced), and its indexes. */
export function putRole(role: RoleRecord, permissions: readonly PermissionRecord[]): RoleRecord {
  idxPut(IDX.roleName(role.workspaceId, role.name), role.id);
  idxPut(IDX.wsRole(role.workspaceId) + role.id);
  return saveRolePermissions({ ...role, permissions: [] }, permissions);
}

/**
 * Gives `role` the permission `p` in the perm_role reverse index, and counts it in
 * perm_links/<p>, a record deletePermissionEverywhere reads and deletes: in cluster mode two
 * nodes giving a role a permission and deleting it at the same moment then change one record,
 * and PostgreSQL refuses the one worked out without the other (the deletion finds the roles
 * by a range, which PostgreSQL does not check), so no role keeps a deleted permission.
 */
function linkPermission(p: PermissionRecord, role: RoleRecord): void {
  idxPut(IDX.permRole(p.id) + role.id);
  idxPut(IDX.permLinks(p.id), String(Number(idxGet(IDX.permLinks(p.id)) ?? 0) + 1));
}

/** Replaces a role's permissions, keeping the perm_role reverse index in step. */
export function saveRolePermissions(role: RoleRecord, permissions: readonly PermissionRecord[]): RoleRecord {
  const before = new Set(role.permissions);
  const after = new Set(permissions.map((p) => p.slug));
  for (const slug of before) {
    if (after.has(slug)) continue;
    const id = idxGet(IDX.permSlug(role.workspaceId, slug));
    if (id !== undefined) idxDel(IDX.permRole(id) + role.id);
  }
  for (const p of permissions) if (!before.has(p.slug)) linkPermission(p, role);
  role.permissions = [...after];
  putRecord('roles', role.id, role);
  return role;
}
