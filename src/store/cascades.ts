// Deletions that reach into other records: a permission leaves every key and role, a role
// leaves every key, an identity is unlinked from its keys. Each runs inside the caller's
// transaction, so verification sees the whole change at once or not at all.
import { delRecord, getRecord, putRecord } from './db.js';
import { idxAll, idxDel } from './indexes.js';
import { getKeyRecord, saveKey } from './keys.js';
import { IDX, type IdentityRecord, type KeyRecord, type PermissionRecord, type RoleRecord } from './records.js';

function rewriteKeys(keyIds: readonly string[], change: (k: KeyRecord) => KeyRecord, nowMs: number): void {
  for (const keyId of keyIds) {
    const key = getKeyRecord(keyId);
    if (key !== undefined) saveKey({ ...change(key), updatedAtMs: nowMs }, key);
  }
}

export function deletePermissionEverywhere(p: PermissionRecord, nowMs: number): void {
  rewriteKeys(idxAll(IDX.permKey(p.id)), (k) => ({ ...k, permissions: k.permissions.filter((s) => s !== p.slug) }), nowMs);
  for (const roleId of idxAll(IDX.permRole(p.id))) {
    const role = getRecord<RoleRecord>('roles', roleId);
    if (role !== undefined) putRecord('roles', roleId, { ...role, permissions: role.permissions.filter((s) => s !== p.slug) });
    idxDel(IDX.permRole(p.id) + roleId);
  }
  delRecord('permissions', p.id);
  idxDel(IDX.permSlug(p.workspaceId, p.slug));
  idxDel(IDX.wsPerm(p.workspaceId) + p.id);
}

export function deleteRoleEverywhere(role: RoleRecord, nowMs: number, permissionIdOf: (slug: string) => string | undefined): void {
  rewriteKeys(idxAll(IDX.roleKey(role.id)), (k) => ({ ...k, roleIds: k.roleIds.filter((r) => r !== role.id) }), nowMs);
  for (const slug of role.permissions) {
    const id = permissionIdOf(slug);
    if (id !== undefined) idxDel(IDX.permRole(id) + role.id);
  }
  delRecord('roles', role.id);
  idxDel(IDX.roleName(role.workspaceId, role.name));
  idxDel(IDX.wsRole(role.workspaceId) + role.id);
}

export function deleteIdentityEverywhere(identity: IdentityRecord, nowMs: number): void {
  rewriteKeys(idxAll(IDX.identKey(identity.id)), (k) => {
    const { identityId: _i, externalId: _e, ...rest } = k;
    return rest;
  }, nowMs);
  delRecord('identities', identity.id);
  idxDel(IDX.identExt(identity.workspaceId, identity.externalId));
  idxDel(IDX.wsIdent(identity.workspaceId) + identity.id);
}
