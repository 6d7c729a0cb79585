// keys.addRoles 200: returns ALL roles of the key (previous + added) as Role objects;
// idempotent; role permissions count for getKey and verification at once.
import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, expectOk } from '../../helpers/server.js';
import { getKey, newKey, newRole, rootKeys, verify } from '../../helpers/keys.js';

const srv = inProcessServer();

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function addRoles(keyId: string, roles: string[], rootKey?: string): Promise<any[]> {
  return expectOk(await call(srv(), 'keys.addRoles', { keyId, roles }, rootKey === undefined ? {} : { rootKey }));
}

describe('keys.addRoles 200', () => {
  it('returns every role of the key with id, name, description and permissions', async () => {
    const r1 = await newRole(srv(), ['ar.read']);
    const r2 = await newRole(srv(), []);
    const { keyId } = await newKey(srv(), { roles: [r1] });
    const described = `described_${Date.now()}`;
    expectOk(await call(srv(), 'permissions.createRole', { name: described, description: 'has a description', permissions: ['ar.write', 'ar.read'] }));
    const roles = await addRoles(keyId, [r2, described]);
    expect(roles.map((r) => r.name).sort()).toEqual([r1, r2, described].sort());
    for (const r of roles) expect(r.id).toMatch(/^role_/);
    const d = roles.find((r) => r.name === described);
    expect(d.description).toBe('has a description');
    expect(d.permissions.map((p: { slug: string }) => p.slug).sort()).toEqual(['ar.read', 'ar.write']);
    for (const p of d.permissions) expect(p).toMatchObject({ id: expect.stringMatching(/^perm_/), name: expect.any(String), slug: expect.any(String) });
    expect(roles.find((r) => r.name === r2)).not.toHaveProperty('permissions');
    const got = await getKey(srv(), keyId);
    expect([...got.roles].sort()).toEqual([r1, r2, described].sort());
    expect([...got.permissions].sort()).toEqual(['ar.read', 'ar.write']);
  });

  it('is idempotent: adding a role the key has changes nothing', async () => {
    const r1 = await newRole(srv());
    const { keyId } = await newKey(srv(), { roles: [r1] });
    expect((await addRoles(keyId, [r1, r1])).map((r) => r.name)).toEqual([r1]);
    expect((await getKey(srv(), keyId)).roles).toEqual([r1]);
  });

  it('roles can be named by id', async () => {
    const name = await newRole(srv());
    const id = expectOk(await call(srv(), 'permissions.getRole', { role: name })).id as string;
    const { keyId } = await newKey(srv());
    expect((await addRoles(keyId, [id])).map((r) => r.name)).toEqual([name]);
  });

  it('the role permissions apply to verification at once', async () => {
    const role = await newRole(srv(), ['gate.open']);
    const { keyId, key } = await newKey(srv());
    expect((await verify(srv(), key, { permissions: 'gate.open' })).code).toBe('INSUFFICIENT_PERMISSIONS');
    await addRoles(keyId, [role]);
    expect(await verify(srv(), key, { permissions: 'gate.open' })).toMatchObject({ valid: true, roles: [role] });
  });

  it('100 roles at once (the upper bound)', async () => {
    const names = await Promise.all(Array.from({ length: 100 }, () => newRole(srv())));
    const { keyId } = await newKey(srv());
    expect(await addRoles(keyId, names)).toHaveLength(100);
  });

  it('update_key on the key API plus rbac.*.add_role_to_key is enough', async () => {
    const role = await newRole(srv());
    const { keyId, apiId } = await newKey(srv());
    const { keys } = await rootKeys(srv(), [[`apis.${apiId}.update_key`, 'rbac.*.add_role_to_key']]);
    expect((await addRoles(keyId, [role], keys[0])).map((r) => r.name)).toEqual([role]);
  });
});
