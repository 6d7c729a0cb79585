import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, expectError, expectOk, foreignRootKey } from '../../helpers/server.js';

const srv = inProcessServer();

describe('permissions.getPermission 404', () => {
  it('an unknown id or slug → 404 permission_not_found naming it', async () => {
    for (const permission of ['perm_1111111111111111111111', 'no.such.slug']) {
      const error = expectError(await call(srv(), 'permissions.getPermission', { permission }), 404, 'permission_not_found');
      expect(error.detail).toContain(permission);
    }
  });

  it("another workspace's permission is not found, by id or slug", async () => {
    const { permissionId } = expectOk(await call(srv(), 'permissions.createPermission', { name: 'n', slug: 'private.slug' }));
    const foreign = await foreignRootKey(srv());
    for (const permission of [permissionId as string, 'private.slug']) {
      expectError(await call(srv(), 'permissions.getPermission', { permission }, { rootKey: foreign }), 404, 'permission_not_found');
    }
  });
});
