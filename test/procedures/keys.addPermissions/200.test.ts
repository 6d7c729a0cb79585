// keys.addPermissions 200: returns all DIRECT permissions of the key; missing slugs are created.
import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, expectOk } from '../../helpers/server.js';
import { getKey, newKey, newRole, rootKeys, uniq, verify } from '../../helpers/keys.js';

const srv = inProcessServer();

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function addPermissions(keyId: string, permissions: string[], rootKey?: string): Promise<any[]> {
  return expectOk(await call(srv(), 'keys.addPermissions', { keyId, permissions }, rootKey === undefined ? {} : { rootKey }));
}
const slugs = (list: { slug: string }[]) => list.map((p) => p.slug).sort();

describe('keys.addPermissions 200', () => {
  it('returns the previous + added direct permissions (not role permissions) as Permission objects', async () => {
    const role = await newRole(srv(), ['ap.from_role']);
    const { keyId } = await newKey(srv(), { permissions: ['ap.before'], roles: [role] });
    const fresh = `${uniq('ap')}.new`;
    const list = await addPermissions(keyId, [fresh, 'ap.before']);
    expect(slugs(list)).toEqual(['ap.before', fresh].sort());
    for (const p of list) expect(p).toMatchObject({ id: expect.stringMatching(/^perm_/), name: expect.any(String), slug: expect.any(String) });
    expect([...(await getKey(srv(), keyId)).permissions].sort()).toEqual(['ap.before', 'ap.from_role', fresh].sort());
  });

  it('a slug of 128 characters (Unkey\'s maximum) is created, granted and verified', async () => {
    const { keyId, key } = await newKey(srv());
    const slug = `${uniq('long')}.${'x'.repeat(128)}`.slice(0, 128);
    expect(slugs(await addPermissions(keyId, [slug]))).toEqual([slug]);
    expect(await verify(srv(), key, { permissions: slug })).toMatchObject({ valid: true, code: 'VALID' });
  });

  it('a missing slug is created (name = slug) and visible through permissions.getPermission', async () => {
    const { keyId } = await newKey(srv());
    const slug = `${uniq('created')}.read`;
    const [p] = await addPermissions(keyId, [slug]);
    expect(p).toMatchObject({ slug, name: slug });
    expect(expectOk(await call(srv(), 'permissions.getPermission', { permission: slug })).id).toBe(p.id);
  });

  it('an existing permission keeps its id, name and description', async () => {
    const slug = `${uniq('exists')}.x`;
    const made = expectOk(await call(srv(), 'permissions.createPermission', { slug, name: 'Pretty Name', description: 'desc' }));
    const { keyId } = await newKey(srv());
    const [p] = await addPermissions(keyId, [slug]);
    expect(p).toEqual({ id: made.permissionId ?? made.id, name: 'Pretty Name', slug, description: 'desc' });
  });

  it('is idempotent; permissions can be named by id', async () => {
    const slug = `${uniq('idem')}.y`;
    const { keyId } = await newKey(srv(), { permissions: [slug] });
    const id = expectOk(await call(srv(), 'permissions.getPermission', { permission: slug })).id as string;
    expect(slugs(await addPermissions(keyId, [slug, id, slug]))).toEqual([slug]);
  });

  it('applies to verification at once (wildcards too)', async () => {
    const { keyId, key } = await newKey(srv());
    expect((await verify(srv(), key, { permissions: 'files.read' })).code).toBe('INSUFFICIENT_PERMISSIONS');
    await addPermissions(keyId, ['files.*']);
    expect((await verify(srv(), key, { permissions: 'files.read' })).code).toBe('VALID');
  });

  it('1000 permissions of 100 chars at once', async () => {
    const stem = uniq('bulk');
    const list = Array.from({ length: 1000 }, (_, i) => `${stem}.${i}.`.padEnd(100, 'z'));
    const { keyId } = await newKey(srv());
    expect(await addPermissions(keyId, list)).toHaveLength(1000);
  });

  it('update_key + add_permission_to_key is enough for existing slugs; create_permission needed only for new ones', async () => {
    const slug = `${uniq('scoped')}.z`;
    expectOk(await call(srv(), 'permissions.createPermission', { slug, name: slug }));
    const { keyId, apiId } = await newKey(srv());
    const { keys } = await rootKeys(srv(), [[`apis.${apiId}.update_key`, 'rbac.*.add_permission_to_key'], [`apis.${apiId}.update_key`, 'rbac.*.add_permission_to_key', 'rbac.*.create_permission']]);
    expect(slugs(await addPermissions(keyId, [slug], keys[0]))).toEqual([slug]);
    expect(slugs(await addPermissions(keyId, ['brand.new.one'], keys[1]))).toEqual(['brand.new.one', slug].sort());
  });
});
