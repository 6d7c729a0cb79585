// Deletions that reach into other records: a permission leaves every key and role, a role
// leaves every key, an identity is unlinked from its keys.
//
// Each is deleted at once, and from that commit on counts nowhere: verification (native
// verify.rs), key views and key writes resolve a key's role ids and identity id through
// their records, and read its permissions (slugs) without those recorded as gone
// (store/gone.ts). Roles lose a deleted permission in the deleting transaction (they are
// few). The keys' links are removed afterwards in the background (`unlinkBatch`, a few
// hundred keys per short transaction), where rewriting tens of thousands of keys in the
// deleting transaction held the serving thread for most of a second. A record in `meta`
// names each unlinking until it is done (for a permission, its gone record), so a restart
// resumes it; a permission created
// again under a gone slug first finishes the unlinking of the old one (`settleGone`), so
// no key that held the old one gets the new one.
import { delRecord, getRecord, putRecord, putText, scanPrefix } from './db.js';
import { allGone, gonePermissionId, goneKey } from './gone.js';
import { idxAll, idxDel, idxGet, idxList } from './indexes.js';
import { getKeyRecord, saveKey } from './keys.js';
import { IDX, type IdentityRecord, type PermissionRecord, type RoleRecord } from './records.js';

/** Deletes the permission (inside the caller's transaction): roles lose it here; returns the unlinking of its keys, to run after the commit. */
export function deletePermissionEverywhere(p: PermissionRecord): Unlinking {
  for (const roleId of idxAll(IDX.permRole(p.id))) {
    const role = getRecord<RoleRecord>('roles', roleId);
    if (role !== undefined) putRecord('roles', roleId, { ...role, permissions: role.permissions.filter((s) => s !== p.slug) });
    idxDel(IDX.permRole(p.id) + roleId);
  }
  // Read, then deleted: see linkPermission (store/permissions.ts).
  if (idxGet(IDX.permLinks(p.id)) !== undefined) idxDel(IDX.permLinks(p.id));
  delRecord('permissions', p.id);
  idxDel(IDX.permSlug(p.workspaceId, p.slug));
  idxDel(IDX.wsPerm(p.workspaceId) + p.id);
  putText('meta', goneKey(p.workspaceId, p.slug), p.id);
  return { kind: 'permission', id: p.id, workspaceId: p.workspaceId, slug: p.slug };
}

/** What the keys of a deleted role, identity or permission still point at, until `unlinkBatch` is done with it. */
export type Unlinking =
  | { kind: 'role' | 'identity'; id: string }
  /** A permission goes with its workspace and slug (keys hold slugs). */
  | { kind: 'permission'; id: string; workspaceId: string; slug: string };

const UNLINK_PREFIX = 'unlink/';
const unlinkKey = (u: { kind: 'role' | 'identity'; id: string }): string => `${UNLINK_PREFIX}${u.kind}/${u.id}`;

/** The unlinkings not finished yet (e.g. cut short by a restart). */
export function pendingUnlinkings(): Unlinking[] {
  const linked: Unlinking[] = scanPrefix('meta', UNLINK_PREFIX, undefined, Number.MAX_SAFE_INTEGER).map((e) => {
    const [kind, id = ''] = e.key.slice(UNLINK_PREFIX.length).split('/');
    return { kind: kind === 'role' ? 'role' : 'identity', id };
  });
  return [...linked, ...allGone().map((g): Unlinking => ({ kind: 'permission', ...g }))];
}

/** Deletes the role (inside the caller's transaction); returns the unlinking of its keys, to run after the commit. */
export function deleteRoleEverywhere(role: RoleRecord, permissionIdOf: (slug: string) => string | undefined): Unlinking {
  for (const slug of role.permissions) {
    const id = permissionIdOf(slug);
    if (id !== undefined) idxDel(IDX.permRole(id) + role.id);
  }
  delRecord('roles', role.id);
  idxDel(IDX.roleName(role.workspaceId, role.name));
  idxDel(IDX.wsRole(role.workspaceId) + role.id);
  const unlinking: Unlinking = { kind: 'role', id: role.id };
  putText('meta', unlinkKey(unlinking), '');
  return unlinking;
}

/** Deletes the identity (inside the caller's transaction); returns the unlinking of its keys, to run after the commit. */
export function deleteIdentityEverywhere(identity: IdentityRecord): Unlinking {
  delRecord('identities', identity.id);
  idxDel(IDX.identExt(identity.workspaceId, identity.externalId));
  idxDel(IDX.wsIdent(identity.workspaceId) + identity.id);
  const unlinking: Unlinking = { kind: 'identity', id: identity.id };
  putText('meta', unlinkKey(unlinking), '');
  return unlinking;
}

/** Keys unlinked per transaction. */
export const UNLINK_BATCH = 200;

/**
 * Unlinks up to UNLINK_BATCH keys from the deleted role, identity or permission (inside the
 * caller's transaction, one per batch); returns how many keys it visited, 0 once none is
 * left (the unlinking's records are then removed). A key that no longer holds it only loses
 * the index entry.
 */
export function unlinkBatch(u: Unlinking, nowMs: number): number {
  return unlinkSome(u, UNLINK_BATCH, nowMs);
}

/** `unlinkBatch`'s body, inside the caller's transaction. */
function unlinkSome(u: Unlinking, max: number, nowMs: number): number {
  const prefix = u.kind === 'role' ? IDX.roleKey(u.id) : u.kind === 'identity' ? IDX.identKey(u.id) : IDX.permKey(u.id);
  const keyIds = idxList(prefix, undefined, max);
  for (const keyId of keyIds) {
    const key = getKeyRecord(keyId);
    if (key !== undefined) {
      if (u.kind === 'role' && key.roleIds.includes(u.id)) {
        saveKey({ ...key, roleIds: key.roleIds.filter((r) => r !== u.id), updatedAtMs: nowMs }, key);
      } else if (u.kind === 'identity' && key.identityId === u.id) {
        const { identityId: _i, externalId: _e, ...rest } = key;
        saveKey({ ...rest, updatedAtMs: nowMs }, key);
      } else if (u.kind === 'permission' && key.permissions.includes(u.slug)) {
        saveKey({ ...key, permissions: key.permissions.filter((s) => s !== u.slug), updatedAtMs: nowMs }, key);
      }
    }
    idxDel(prefix + keyId);
  }
  if (keyIds.length === 0) {
    if (u.kind !== 'permission') delRecord('meta', unlinkKey(u));
    // A permission of the same slug deleted since has a gone record of its own.
    else if (gonePermissionId(u.workspaceId, u.slug) === u.id) delRecord('meta', goneKey(u.workspaceId, u.slug));
  }
  return keyIds.length;
}

/**
 * Before a permission is created under `slug` (inside the caller's transaction): a deleted
 * one of that slug whose keys are not all unlinked yet is unlinked from the rest of them
 * now, so none of its keys holds the new one.
 */
export function settleGone(workspaceId: string, slug: string, nowMs: number): void {
  const id = gonePermissionId(workspaceId, slug);
  if (id === undefined) return;
  const u: Unlinking = { kind: 'permission', id, workspaceId, slug };
  // The last round finds nothing left and removes the unlinking's records.
  while (unlinkSome(u, UNLINK_BATCH, nowMs) > 0);
}
