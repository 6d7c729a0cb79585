// deleteRole / deleteIdentity (src/store/cascades.ts): the role or identity is gone at the
// commit, and the keys' links to it are removed afterwards in short batches, resumed from a
// record in `meta` (as after a restart). In-process, through the real handlers and store.
import { describe, expect, it } from 'vitest';
import { Principal } from '../../src/auth/permissions.js';
import { createApi } from '../../src/procedures/apis/createApi.js';
import type { Ctx } from '../../src/procedures/context.js';
import { createIdentity } from '../../src/procedures/identities/createIdentity.js';
import { createKey } from '../../src/procedures/keys/createKey.js';
import { keyView } from '../../src/procedures/keys/view.js';
import { createRole } from '../../src/procedures/permissions/createRole.js';
import { deleteIdentityEverywhere, deleteRoleEverywhere, pendingUnlinkings, unlinkBatch, UNLINK_BATCH, type Unlinking } from '../../src/store/cascades.js';
import { getRecord, transact } from '../../src/store/db.js';
import { idxGet, idxList } from '../../src/store/indexes.js';
import { getKeyRecord } from '../../src/store/keys.js';
import { IDX, type IdentityRecord, type RoleRecord } from '../../src/store/records.js';
import { createWorkspace } from '../../src/store/rootKeys.js';
import { tempStore } from '../helpers/tempStore.js';

tempStore('keyward-unlink-');
const T0 = Date.UTC(2026, 0, 15, 12);

function context(): Ctx {
  const ws = createWorkspace(T0).id;
  return { principal: new Principal(ws, 'rk_test', ['*']), nowMs: T0, requestId: 'req_test', vaultKey: undefined };
}

/** Runs the unlinking to its end as the background does; returns the batches it took. */
function runToEnd(u: Unlinking): number {
  let batches = 0;
  while (unlinkBatch(u, T0 + 1) > 0) batches++;
  return batches;
}

describe('unlinking the keys of a deleted role or identity', () => {
  it('a deleted role is on no key view at once; its links go in batches; a restart finds what is left', () => {
    const ctx = context();
    const apiId = createApi({ name: 'unlink-roles' }, ctx).apiId;
    const role = createRole({ name: 'doomed', permissions: ['docs.read'] }, ctx);
    const kept = createRole({ name: 'kept', permissions: ['docs.write'] }, ctx);
    const count = 2 * UNLINK_BATCH + 17;
    const keyIds = Array.from({ length: count }, () => createKey({ apiId, byteLength: 16, enabled: true, recoverable: false, roles: ['doomed', 'kept'] }, ctx).keyId);
    const unlinking = transact(() => deleteRoleEverywhere(getRecord<RoleRecord>('roles', role.roleId) as RoleRecord, (slug) => idxGet(IDX.permSlug(ctx.principal.workspaceId, slug))));
    expect(pendingUnlinkings()).toContainEqual(unlinking);
    // Before any unlinking: the record still names the role, the view does not.
    const first = getKeyRecord(keyIds[0] as string);
    expect(first?.roleIds).toContain(role.roleId);
    expect(keyView(first!, T0)).toMatchObject({ roles: ['kept'], permissions: ['docs.write'] });
    // One batch, then "a restart": the record says what is left.
    expect(unlinkBatch(unlinking, T0 + 1)).toBe(UNLINK_BATCH);
    expect(pendingUnlinkings()).toContainEqual(unlinking);
    expect(runToEnd(unlinking)).toBe(2);
    expect(pendingUnlinkings()).not.toContainEqual(unlinking);
    expect(idxList(IDX.roleKey(role.roleId), undefined, 10)).toEqual([]);
    for (const id of keyIds) expect(getKeyRecord(id)?.roleIds).toEqual([kept.roleId]);
    expect(idxList(IDX.roleKey(kept.roleId), undefined, count + 1)).toHaveLength(count);
  });

  it('a deleted identity: its keys show no externalId at once, even after a new identity takes the externalId; then they are unlinked', () => {
    const ctx = context();
    const apiId = createApi({ name: 'unlink-identities' }, ctx).apiId;
    const { identityId } = createIdentity({ externalId: 'user_1' }, ctx);
    const oldKeys = Array.from({ length: UNLINK_BATCH + 5 }, () => createKey({ apiId, byteLength: 16, enabled: true, recoverable: false, externalId: 'user_1' }, ctx).keyId);
    const unlinking = transact(() => deleteIdentityEverywhere(getRecord<IdentityRecord>('identities', identityId) as IdentityRecord));
    const newKey = createKey({ apiId, byteLength: 16, enabled: true, recoverable: false, externalId: 'user_1' }, ctx).keyId;
    const fresh = getKeyRecord(newKey)!;
    expect(fresh.identityId).not.toBe(identityId);
    expect(keyView(fresh, T0)).toMatchObject({ externalId: 'user_1', identity: { id: fresh.identityId, externalId: 'user_1' } });
    const stale = keyView(getKeyRecord(oldKeys[0] as string)!, T0);
    expect(stale).not.toHaveProperty('externalId');
    expect(stale).not.toHaveProperty('identity');
    expect(runToEnd(unlinking)).toBe(2);
    for (const id of oldKeys) {
      const k = getKeyRecord(id)!;
      expect(k.identityId).toBeUndefined();
      expect(k.externalId).toBeUndefined();
      expect(k.updatedAtMs).toBe(T0 + 1);
    }
    expect(idxList(IDX.identKey(identityId), undefined, 10)).toEqual([]);
    expect(idxList(IDX.identKey(fresh.identityId as string), undefined, 10)).toEqual([newKey]);
    expect(pendingUnlinkings()).toEqual([]);
  });
});
