import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, createApi, expectError, expectOk } from '../../helpers/server.js';

const srv = inProcessServer();

describe('permissions.deletePermission 200', () => {
  it('returns {} and the permission is gone (by id and slug); the slug can be created again', async () => {
    const { permissionId } = expectOk(await call(srv(), 'permissions.createPermission', { name: 'n', slug: 'short.lived' }));
    const res = await call(srv(), 'permissions.deletePermission', { permission: permissionId });
    expect(expectOk(res)).toEqual({});
    for (const permission of [permissionId as string, 'short.lived']) expectError(await call(srv(), 'permissions.getPermission', { permission }), 404, 'permission_not_found');
    expect(expectOk(await call(srv(), 'permissions.listPermissions', { search: 'short.lived' }))).toEqual([]);
    expect(expectOk(await call(srv(), 'permissions.createPermission', { name: 'again', slug: 'short.lived' })).permissionId).not.toBe(permissionId);
  });

  it('by slug: removes it from every key and role at once (getKey, getRole, verifyKey)', async () => {
    const apiId = await createApi(srv());
    expectOk(await call(srv(), 'permissions.createRole', { name: 'editor', permissions: ['doc.read', 'doc.write'] }));
    const direct = expectOk(await call(srv(), 'keys.createKey', { apiId, permissions: ['doc.read', 'doc.other'] }));
    const viaRole = expectOk(await call(srv(), 'keys.createKey', { apiId, roles: ['editor'] }));
    expect(expectOk(await call(srv(), 'keys.verifyKey', { key: viaRole.key, permissions: 'doc.read' })).valid).toBe(true);

    expectOk(await call(srv(), 'permissions.deletePermission', { permission: 'doc.read' }));

    expect(expectOk(await call(srv(), 'keys.getKey', { keyId: direct.keyId })).permissions).toEqual(['doc.other']);
    expect(expectOk(await call(srv(), 'keys.getKey', { keyId: viaRole.keyId })).permissions).toEqual(['doc.write']);
    const role = expectOk(await call(srv(), 'permissions.getRole', { role: 'editor' }));
    expect(role.permissions.map((p: { slug: string }) => p.slug)).toEqual(['doc.write']);
    for (const key of [direct.key, viaRole.key]) {
      const verified = expectOk(await call(srv(), 'keys.verifyKey', { key, permissions: 'doc.read' }));
      expect(verified).toMatchObject({ valid: false, code: 'INSUFFICIENT_PERMISSIONS' });
    }
    // Re-creating the slug does not bring it back to the key or the role.
    expectOk(await call(srv(), 'permissions.createPermission', { name: 'n', slug: 'doc.read' }));
    expect(expectOk(await call(srv(), 'keys.verifyKey', { key: direct.key, permissions: 'doc.read' })).valid).toBe(false);
  });
});
