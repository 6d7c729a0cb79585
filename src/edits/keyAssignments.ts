// The shared body of keys.{add,remove,set}{Roles,Permissions}: load the key (update_key on
// its API), compute the new list, save, and answer with the resulting list.
import { requirePermission } from '../auth/require.js';
import { assignedPermissionNotFound } from '../errors/errors.js';
import { keyFor } from '../lookups/keys.js';
import type { Ctx } from '../request/context.js';
import { getRecord } from '../store/db.js';
import { saveKey } from '../store/keys.js';
import { ensurePermissions, findPermission, missingPermissions, requireRoles } from '../store/permissions.js';
import type { KeyRecord, PermissionRecord, RoleRecord } from '../store/records.js';
import { permissionView, roleView, type PermissionView, type RoleView } from '../views/permissions.js';

export type Mode = 'add' | 'remove' | 'set';

export async function assignRoles(mode: Mode, input: { keyId: string; roles: string[] }, ctx: Ctx): Promise<RoleView[]> {
  return ctx.transact(() => {
    const before = keyFor(ctx, input.keyId, 'update_key');
    const named = requireRoles(ctx.principal.workspaceId, input.roles).map((r) => r.id);
    const roleIds = mode === 'set' ? named : mode === 'add' ? [...new Set([...before.roleIds, ...named])] : before.roleIds.filter((id) => !named.includes(id));
    const key: KeyRecord = { ...before, roleIds, updatedAtMs: ctx.nowMs };
    saveKey(key, before);
    return roleIds.map((id) => getRecord<RoleRecord>('roles', id)).filter((r): r is RoleRecord => r !== undefined).map(roleView);
  });
}

export async function assignPermissions(mode: Mode, input: { keyId: string; permissions: string[] }, ctx: Ctx): Promise<PermissionView[]> {
  const ws = ctx.principal.workspaceId;
  return ctx.transact(() => {
    const before = keyFor(ctx, input.keyId, 'update_key');
    let named: PermissionRecord[];
    if (mode === 'remove') {
      named = input.permissions.map((slug) => {
        const p = findPermission(ws, slug);
        if (p === undefined) throw assignedPermissionNotFound(slug);
        return p;
      });
    } else {
      if (missingPermissions(ws, input.permissions).length > 0) requirePermission(ctx.principal, 'rbac', undefined, 'create_permission');
      named = ensurePermissions(ws, input.permissions, ctx.nowMs).records;
    }
    const slugs = named.map((p) => p.slug);
    const permissions = mode === 'set' ? slugs : mode === 'add' ? [...new Set([...before.permissions, ...slugs])] : before.permissions.filter((s) => !slugs.includes(s));
    const key: KeyRecord = { ...before, permissions, updatedAtMs: ctx.nowMs };
    saveKey(key, before);
    return permissions.map((slug) => findPermission(ws, slug)).filter((p): p is PermissionRecord => p !== undefined).map(permissionView);
  });
}
