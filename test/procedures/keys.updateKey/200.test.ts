// keys.updateKey 200: partial semantics (omitted unchanged, null clears, lists replace),
// credits null → unlimited, the updated record as the result, edges of the bounds.
import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, expectOk } from '../../helpers/server.js';
import { getKey, newKey, newRole, rootKeys, uniq, verify } from '../../helpers/keys.js';

const srv = inProcessServer();

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function update(body: Record<string, unknown>): Promise<any> {
  return expectOk(await call(srv(), 'keys.updateKey', body));
}

const FULL = {
  name: 'original',
  externalId: 'upd_owner',
  meta: { v: 1 },
  expires: 4000000000000,
  credits: { remaining: 10, refill: { interval: 'daily', amount: 10 } },
  ratelimits: [{ name: 'keep', limit: 5, duration: 1000, autoApply: true }, { name: 'drop', limit: 1, duration: 1000 }],
  permissions: ['p.one', 'p.two'],
};

describe('keys.updateKey 200', () => {
  it('only keyId: nothing changes except updatedAt; the result is the updated record', async () => {
    const { keyId } = await newKey(srv(), FULL);
    const before = await getKey(srv(), keyId);
    const result = await update({ keyId });
    const after = await getKey(srv(), keyId);
    expect(result).toEqual(after);
    const { updatedAt, ...rest } = after;
    expect(typeof updatedAt).toBe('number');
    expect(rest).toEqual(before);
  });

  it('a single field changes only that field', async () => {
    const { keyId } = await newKey(srv(), FULL);
    const before = await getKey(srv(), keyId);
    const result = await update({ keyId, name: 'renamed' });
    expect(result.name).toBe('renamed');
    const { updatedAt: _u, ...rest } = result;
    expect(rest).toEqual({ ...before, name: 'renamed' });
  });

  it('null clears name, meta, expires and externalId', async () => {
    const { keyId, key } = await newKey(srv(), { ...FULL, expires: 1 });
    expect((await verify(srv(), key)).code).toBe('EXPIRED');
    const result = await update({ keyId, name: null, meta: null, expires: null, externalId: null });
    for (const field of ['name', 'meta', 'expires', 'externalId', 'identity']) expect(result).not.toHaveProperty(field);
    expect(await getKey(srv(), keyId)).toEqual(result);
    expect((await verify(srv(), key)).code).toBe('VALID');
  });

  it('credits:null → unlimited (no credits on the record, verification consumes nothing)', async () => {
    const { keyId, key } = await newKey(srv(), { credits: { remaining: 1 } });
    const result = await update({ keyId, credits: null });
    expect(result).not.toHaveProperty('credits');
    for (let i = 0; i < 3; i++) expect(await verify(srv(), key)).toMatchObject({ valid: true, code: 'VALID' });
    expect(await getKey(srv(), keyId)).not.toHaveProperty('credits');
  });

  it('credits.remaining:null also → unlimited and drops the refill', async () => {
    const { keyId } = await newKey(srv(), FULL);
    expect(await update({ keyId, credits: { remaining: null } })).not.toHaveProperty('credits');
  });

  it('credits on an unlimited key sets a balance; refill:null clears only the refill; remaining alone keeps the refill', async () => {
    const { keyId, key } = await newKey(srv());
    expect((await update({ keyId, credits: { remaining: 2, refill: { interval: 'monthly', amount: 5, refillDay: 3 } } })).credits).toEqual({ remaining: 2, refill: { interval: 'monthly', amount: 5, refillDay: 3 } });
    expect((await update({ keyId, credits: { remaining: 7 } })).credits).toEqual({ remaining: 7, refill: { interval: 'monthly', amount: 5, refillDay: 3 } });
    expect((await update({ keyId, credits: { refill: null } })).credits).toEqual({ remaining: 7 });
    expect((await verify(srv(), key)).credits).toBe(6);
  });

  it('lists replace: roles, permissions, ratelimits (a kept limit name keeps its id)', async () => {
    const r1 = await newRole(srv(), ['from.r1']);
    const r2 = await newRole(srv(), ['from.r2']);
    const { keyId } = await newKey(srv(), { ...FULL, roles: [r1] });
    const before = await getKey(srv(), keyId);
    const keepId = before.ratelimits.find((r: { name: string }) => r.name === 'keep').id;
    const result = await update({ keyId, roles: [r2], permissions: ['p.three'], ratelimits: [{ name: 'keep', limit: 50, duration: 2000 }, { name: 'new_one', limit: 2, duration: 1000, autoApply: true }] });
    expect(result.roles).toEqual([r2]);
    expect([...result.permissions].sort()).toEqual(['from.r2', 'p.three']);
    expect(result.ratelimits).toEqual([
      { id: keepId, name: 'keep', limit: 50, duration: 2000, autoApply: false },
      { id: expect.stringMatching(/^rl_/), name: 'new_one', limit: 2, duration: 1000, autoApply: true },
    ]);
    const cleared = await update({ keyId, roles: [], permissions: [], ratelimits: [] });
    for (const field of ['roles', 'permissions', 'ratelimits']) expect(cleared).not.toHaveProperty(field);
  });

  it('permissions named in updateKey are created when missing', async () => {
    const { keyId } = await newKey(srv());
    const slug = `${uniq('auto')}.perm`;
    expect((await update({ keyId, permissions: [slug] })).permissions).toEqual([slug]);
    expect(expectOk(await call(srv(), 'permissions.getPermission', { permission: slug })).slug).toBe(slug);
  });

  it('enabled:false → DISABLED at once; enabled:true → VALID again', async () => {
    const { keyId, key } = await newKey(srv());
    expect((await update({ keyId, enabled: false })).enabled).toBe(false);
    expect((await verify(srv(), key)).code).toBe('DISABLED');
    await update({ keyId, enabled: true });
    expect((await verify(srv(), key)).code).toBe('VALID');
  });

  it('externalId links (upserts) an identity; verify returns it', async () => {
    const { keyId, key } = await newKey(srv());
    const externalId = uniq('linked');
    const result = await update({ keyId, externalId });
    expect(result).toMatchObject({ externalId, identity: { externalId } });
    expect((await verify(srv(), key)).identity.externalId).toBe(externalId);
  });

  it('accepts the edges: name 1/255, meta 10240 bytes, expires 0 and 4102444800000, 50 ratelimits', async () => {
    const { keyId } = await newKey(srv());
    expect((await update({ keyId, name: 'x' })).name).toBe('x');
    expect((await update({ keyId, name: 'y'.repeat(255) })).name).toHaveLength(255);
    const meta = { p: 'm'.repeat(10240 - JSON.stringify({ p: '' }).length) };
    expect((await update({ keyId, meta })).meta).toEqual(meta);
    expect((await update({ keyId, expires: 0 })).expires).toBe(0);
    expect((await update({ keyId, expires: 4102444800000 })).expires).toBe(4102444800000);
    const ratelimits = Array.from({ length: 50 }, (_, i) => ({ name: `l_${i}_x`, limit: 1, duration: 1000 }));
    expect((await update({ keyId, ratelimits })).ratelimits).toHaveLength(50);
  });

  it('changing externalId moves the key between identities (listKeys filter follows)', async () => {
    const { keyId, apiId } = await newKey(srv(), { externalId: 'upd_from' });
    await update({ keyId, externalId: 'upd_to' });
    expect(expectOk(await call(srv(), 'apis.listKeys', { apiId, externalId: 'upd_from' }))).toEqual([]);
    expect((expectOk(await call(srv(), 'apis.listKeys', { apiId, externalId: 'upd_to' })) as { keyId: string }[]).map((k) => k.keyId)).toEqual([keyId]);
    await update({ keyId, externalId: null });
    expect(expectOk(await call(srv(), 'apis.listKeys', { apiId, externalId: 'upd_to' }))).toEqual([]);
  });

  it('replaced roles/permissions keep the cascades right: deleting the new ones removes them, the old ones leave the key alone', async () => {
    const oldRole = await newRole(srv());
    const newRoleName = await newRole(srv());
    const oldPerm = `${uniq('oldp')}.x`;
    const newPerm = `${uniq('newp')}.x`;
    const { keyId } = await newKey(srv(), { roles: [oldRole], permissions: [oldPerm] });
    await update({ keyId, roles: [newRoleName], permissions: [newPerm] });
    const before = await getKey(srv(), keyId);
    expectOk(await call(srv(), 'permissions.deleteRole', { role: oldRole }));
    expectOk(await call(srv(), 'permissions.deletePermission', { permission: oldPerm }));
    const mid = await getKey(srv(), keyId);
    expect(mid.roles).toEqual([newRoleName]);
    expect(mid.permissions).toEqual([newPerm]);
    expect(mid.updatedAt).toBe(before.updatedAt);
    expectOk(await call(srv(), 'permissions.deleteRole', { role: newRoleName }));
    expectOk(await call(srv(), 'permissions.deletePermission', { permission: newPerm }));
    const after = await getKey(srv(), keyId);
    expect(after).not.toHaveProperty('roles');
    expect(after).not.toHaveProperty('permissions');
  });

  it('apis.<apiId>.update_key is enough', async () => {
    const { keyId, apiId } = await newKey(srv());
    const { keys } = await rootKeys(srv(), [[`apis.${apiId}.update_key`]]);
    expect(expectOk(await call(srv(), 'keys.updateKey', { keyId, name: 'by-scoped' }, { rootKey: keys[0] })).name).toBe('by-scoped');
  });
});
