// deleteRole / deleteIdentity / deletePermission (src/store/cascades.ts): the item is gone at
// the commit, and the keys' links to it are removed afterwards in short batches, resumed from a
// record in `meta` (as after a restart). In-process, through the real handlers and store.
import { describe, expect, it } from 'vitest';
import { Principal } from '../../src/auth/permissions.js';
import { createApi } from '../../src/procedures/apis/createApi.js';
import { createIdentity } from '../../src/procedures/identities/createIdentity.js';
import { createKey } from '../../src/procedures/keys/createKey.js';
import { keyView } from '../../src/views/keys.js';
import { createRole } from '../../src/procedures/permissions/createRole.js';
import { deleteIdentityEverywhere, deletePermissionEverywhere, deleteRoleEverywhere, pendingUnlinkings, unlinkBatch, UNLINK_BATCH, type Unlinking } from '../../src/store/cascades.js';
import { gonePermissions } from '../../src/store/gone.js';
import { findPermission } from '../../src/store/permissions.js';
import { createPermission } from '../../src/procedures/permissions/createPermission.js';
import { getKeyRecord as keyRecord, saveKey } from '../../src/store/keys.js';
import { direct, getRecord } from '../../src/store/db.js';
import { idxGet, idxList } from '../../src/store/indexes.js';
import { IDX, type IdentityRecord, type PermissionRecord, type RoleRecord } from '../../src/store/records.js';
import { createWorkspace } from '../../src/store/rootKeys.js';
import type { Ctx } from '../../src/request/context.js';
import { directCtx } from '../../src/request/direct.js';
import { tempStore } from '../helpers/tempStore.js';

tempStore('keyward-unlink-');
const T0 = Date.UTC(2026, 0, 15, 12);

function context(): Ctx {
  const ws = direct.transact(() => createWorkspace(T0)).id;
  return directCtx(new Principal(ws, 'rk_test', ['*']), T0);
}

/** Runs the unlinking to its end as the background does; returns the batches it took. */
function runToEnd(u: Unlinking): number {
  let batches = 0;
  while (direct.transact(() => unlinkBatch(u, T0 + 1)) > 0) batches++;
  return batches;
}

describe('unlinking the keys of a deleted role or identity', () => {
  it('a deleted role is on no key view at once; its links go in batches; a restart finds what is left', async () => {
    const ctx = context();
    const apiId = (await createApi({ name: 'unlink-roles' }, ctx)).apiId;
    const role = await createRole({ name: 'doomed', permissions: ['docs.read'] }, ctx);
    const kept = await createRole({ name: 'kept', permissions: ['docs.write'] }, ctx);
    const count = 2 * UNLINK_BATCH + 17;
    const keyIds: string[] = [];
    for (let i = 0; i < count; i++) keyIds.push((await createKey({ apiId, byteLength: 16, enabled: true, recoverable: false, roles: ['doomed', 'kept'] }, ctx)).keyId);
    const unlinking = direct.transact(() => deleteRoleEverywhere(getRecord<RoleRecord>('roles', role.roleId) as RoleRecord, (slug) => idxGet(IDX.permSlug(ctx.principal.workspaceId, slug))));
    expect(pendingUnlinkings()).toContainEqual(unlinking);
    // Before any unlinking: the record still names the role, the view does not.
    const first = keyRecord(keyIds[0] as string);
    expect(first?.roleIds).toContain(role.roleId);
    expect(keyView(first!, T0)).toMatchObject({ roles: ['kept'], permissions: ['docs.write'] });
    // One batch, then "a restart": the record says what is left.
    expect(direct.transact(() => unlinkBatch(unlinking, T0 + 1))).toBe(UNLINK_BATCH);
    expect(pendingUnlinkings()).toContainEqual(unlinking);
    expect(runToEnd(unlinking)).toBe(2);
    expect(pendingUnlinkings()).not.toContainEqual(unlinking);
    expect(idxList(IDX.roleKey(role.roleId), undefined, 10)).toEqual([]);
    for (const id of keyIds) expect(keyRecord(id)?.roleIds).toEqual([kept.roleId]);
    expect(idxList(IDX.roleKey(kept.roleId), undefined, count + 1)).toHaveLength(count);
  });

  it('a deleted identity: its keys show no externalId at once, even after a new identity takes the externalId; then they are unlinked', async () => {
    const ctx = context();
    const apiId = (await createApi({ name: 'unlink-identities' }, ctx)).apiId;
    const { identityId } = await createIdentity({ externalId: 'user_1' }, ctx);
    const oldKeys: string[] = [];
    for (let i = 0; i < UNLINK_BATCH + 5; i++) oldKeys.push((await createKey({ apiId, byteLength: 16, enabled: true, recoverable: false, externalId: 'user_1' }, ctx)).keyId);
    const unlinking = direct.transact(() => deleteIdentityEverywhere(getRecord<IdentityRecord>('identities', identityId) as IdentityRecord));
    const newKey = (await createKey({ apiId, byteLength: 16, enabled: true, recoverable: false, externalId: 'user_1' }, ctx)).keyId;
    const fresh = keyRecord(newKey)!;
    expect(fresh.identityId).not.toBe(identityId);
    expect(keyView(fresh, T0)).toMatchObject({ externalId: 'user_1', identity: { id: fresh.identityId, externalId: 'user_1' } });
    const stale = keyView(keyRecord(oldKeys[0] as string)!, T0);
    expect(stale).not.toHaveProperty('externalId');
    expect(stale).not.toHaveProperty('identity');
    expect(runToEnd(unlinking)).toBe(2);
    for (const id of oldKeys) {
      const k = keyRecord(id)!;
      expect(k.identityId).toBeUndefined();
      expect(k.externalId).toBeUndefined();
      expect(k.updatedAtMs).toBe(T0 + 1);
    }
    expect(idxList(IDX.identKey(identityId), undefined, 10)).toEqual([]);
    expect(idxList(IDX.identKey(fresh.identityId as string), undefined, 10)).toEqual([newKey]);
    expect(pendingUnlinkings()).toEqual([]);
  });

  it('a deleted permission is on no key at once (views, writes), a new one of its slug reaches none of the old keys, and the unlinking resumes from its record', async () => {
    const ctx = context();
    const ws = ctx.principal.workspaceId;
    const apiId = (await createApi({ name: 'unlink-permissions' }, ctx)).apiId;
    const role = await createRole({ name: 'reader', permissions: ['docs.read', 'docs.list'] }, ctx);
    const count = UNLINK_BATCH + 9;
    const keyIds: string[] = [];
    for (let i = 0; i < count; i++) keyIds.push((await createKey({ apiId, byteLength: 16, enabled: true, recoverable: false, permissions: ['docs.read', 'docs.own'] }, ctx)).keyId);
    const old = findPermission(ws, 'docs.read') as PermissionRecord;
    const unlinking = direct.transact(() => deletePermissionEverywhere(old));
    expect(pendingUnlinkings()).toContainEqual({ kind: 'permission', id: old.id, workspaceId: ws, slug: 'docs.read' });
    expect(gonePermissions(ws)).toEqual(new Set(['docs.read']));
    // The role lost it in the same transaction; the keys still hold the slug, the views do not show it.
    expect((getRecord<RoleRecord>('roles', role.roleId) as RoleRecord).permissions).toEqual(['docs.list']);
    const first = keyRecord(keyIds[0] as string)!;
    expect(first.permissions).toContain('docs.read');
    expect(keyView(first, T0).permissions).toEqual(['docs.own']);
    // A key written meanwhile (here: a copy, as rerollKey makes) does not keep it.
    direct.transact(() => saveKey({ ...first, id: 'key_copy', hash: Buffer.alloc(32, 7).toString('base64') }, undefined));
    expect(keyRecord('key_copy')?.permissions).toEqual(['docs.own']);
    // One batch, then the same slug is created again: the rest of the old keys lose the old
    // one first, so none of them holds the new one.
    expect(direct.transact(() => unlinkBatch(unlinking, T0 + 1))).toBe(UNLINK_BATCH);
    const again = await createPermission({ name: 'docs.read', slug: 'docs.read' }, ctx);
    expect(again.permissionId).not.toBe(old.id);
    expect(gonePermissions(ws)).toEqual(new Set());
    expect(pendingUnlinkings()).not.toContainEqual(expect.objectContaining({ id: old.id }));
    for (const id of keyIds) expect(keyRecord(id)?.permissions).toEqual(['docs.own']);
    expect(idxList(IDX.permKey(old.id), undefined, 10)).toEqual([]);
    const fresh = (await createKey({ apiId, byteLength: 16, enabled: true, recoverable: false, permissions: ['docs.read'] }, ctx)).keyId;
    expect(keyView(keyRecord(fresh)!, T0).permissions).toEqual(['docs.read']);
    expect(idxList(IDX.permKey(again.permissionId), undefined, 10)).toEqual([fresh]);
  });
});
