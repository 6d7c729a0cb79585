// Deletions that reach into other records: a permission leaves every key and role, a role
// leaves every key, an identity is unlinked from its keys.
//
// A permission leaves them inside the caller's transaction (keys hold permission slugs,
// which verification reads as they are), so verification sees the whole change at once or
// not at all. A role or an identity is deleted at once, and verification (native
// verify.rs), key views and key writes resolve a key's role ids and identity id through
// their records, so from that commit on the deleted one counts nowhere; the keys' links to
// it are removed afterwards in the background (`unlinkBatch`, a few hundred keys per short
// transaction), where rewriting tens of thousands of keys in the deleting transaction held
// the serving thread for most of a second. A record in `meta` names each such unlinking
// until it is done, so a restart resumes it.
import { delRecord, getRecord, putRecord, putText, scanPrefix, transact } from './db.js';
import { idxAll, idxDel, idxList } from './indexes.js';
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

/** What the keys of a deleted role or identity still point at, until `unlinkBatch` is done with it. */
export interface Unlinking {
  kind: 'role' | 'identity';
  id: string;
}

const UNLINK_PREFIX = 'unlink/';
const unlinkKey = (u: Unlinking): string => `${UNLINK_PREFIX}${u.kind}/${u.id}`;

/** The unlinkings not finished yet (e.g. cut short by a restart). */
export function pendingUnlinkings(): Unlinking[] {
  return scanPrefix('meta', UNLINK_PREFIX, undefined, Number.MAX_SAFE_INTEGER).map((e) => {
    const [kind, id] = e.key.slice(UNLINK_PREFIX.length).split('/');
    return { kind: kind === 'role' ? 'role' : 'identity', id: id ?? '' };
  });
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
 * Unlinks up to UNLINK_BATCH keys from the deleted role or identity (one transaction);
 * returns how many keys it visited, 0 once none is left (the unlinking's record is then
 * removed). A key that no longer points at it only loses the index entry.
 */
export function unlinkBatch(u: Unlinking, nowMs: number): number {
  return transact(() => {
    const prefix = u.kind === 'role' ? IDX.roleKey(u.id) : IDX.identKey(u.id);
    const keyIds = idxList(prefix, undefined, UNLINK_BATCH);
    for (const keyId of keyIds) {
      const key = getKeyRecord(keyId);
      if (key !== undefined) {
        if (u.kind === 'role' && key.roleIds.includes(u.id)) {
          saveKey({ ...key, roleIds: key.roleIds.filter((r) => r !== u.id), updatedAtMs: nowMs }, key);
        } else if (u.kind === 'identity' && key.identityId === u.id) {
          const { identityId: _i, externalId: _e, ...rest } = key;
          saveKey({ ...rest, updatedAtMs: nowMs }, key);
        }
      }
      idxDel(prefix + keyId);
    }
    if (keyIds.length === 0) delRecord('meta', unlinkKey(u));
    return keyIds.length;
  });
}
