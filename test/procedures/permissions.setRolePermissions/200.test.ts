import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, createApi, expectOk } from '../../helpers/server.js';

const srv = inProcessServer();

const slugs = (perms: { slug: string }[] | undefined): string[] => (perms ?? []).map((p) => p.slug);

describe('permissions.setRolePermissions 200', () => {
  it('replaces the set (by role id or name), creating missing permissions; returns the resulting permissions', async () => {
    const { roleId } = expectOk(await call(srv(), 'permissions.createRole', { name: 'setter', permissions: ['s.a', 's.b'] }));
    const existing = expectOk(await call(srv(), 'permissions.createPermission', { name: 'C', slug: 's.c' }));
    const data = expectOk(await call(srv(), 'permissions.setRolePermissions', { roleId, permissions: ['s.b', 's.c', 's.new'] }));
    expect(slugs(data)).toEqual(['s.b', 's.c', 's.new']);
    expect(data[1]).toEqual({ id: existing.permissionId, name: 'C', slug: 's.c' });
    expect(slugs(expectOk(await call(srv(), 'permissions.getRole', { role: roleId })).permissions)).toEqual(['s.b', 's.c', 's.new']);
    expectOk(await call(srv(), 'permissions.getPermission', { permission: 's.new' }));
    // s.a left the role but still exists.
    expectOk(await call(srv(), 'permissions.getPermission', { permission: 's.a' }));

    expect(slugs(expectOk(await call(srv(), 'permissions.setRolePermissions', { roleId: 'setter', permissions: ['s.a', 's.a'] })))).toEqual(['s.a']);
  });

  it('an empty list removes every permission; keys of the role lose them at once', async () => {
    const apiId = await createApi(srv());
    expectOk(await call(srv(), 'permissions.createRole', { name: 'emptied', permissions: ['e.read'] }));
    const { key, keyId } = expectOk(await call(srv(), 'keys.createKey', { apiId, roles: ['emptied'] }));
    expect(expectOk(await call(srv(), 'keys.verifyKey', { key, permissions: 'e.read' })).valid).toBe(true);
    expect(expectOk(await call(srv(), 'permissions.setRolePermissions', { roleId: 'emptied', permissions: [] }))).toEqual([]);
    expect(expectOk(await call(srv(), 'permissions.getRole', { role: 'emptied' })).permissions).toBeUndefined();
    expect(expectOk(await call(srv(), 'keys.getKey', { keyId })).permissions).toBeUndefined();
    expect(expectOk(await call(srv(), 'keys.verifyKey', { key, permissions: 'e.read' })).valid).toBe(false);
  });

  it('a permission removed from a role no longer follows the role when deleted (and vice versa)', async () => {
    expectOk(await call(srv(), 'permissions.createRole', { name: 'linked', permissions: ['l.x'] }));
    expectOk(await call(srv(), 'permissions.setRolePermissions', { roleId: 'linked', permissions: ['l.y'] }));
    expectOk(await call(srv(), 'permissions.deletePermission', { permission: 'l.y' }));
    expect(expectOk(await call(srv(), 'permissions.getRole', { role: 'linked' })).permissions).toBeUndefined();
    expectOk(await call(srv(), 'permissions.deletePermission', { permission: 'l.x' }));
  });
});
