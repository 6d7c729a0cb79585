// keys.removePermissions 404: an unknown slug → permission_not_found; unknown/foreign key.
import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, expectError } from '../../helpers/server.js';
import { foreignStarKey, getKey, newKey } from '../../helpers/keys.js';

const srv = inProcessServer();

describe('keys.removePermissions 404', () => {
  it('a slug that does not exist → 404 permission_not_found naming it; nothing removed or created', async () => {
    const { keyId } = await newKey(srv(), { permissions: ['rp404.keep'] });
    const error = expectError(await call(srv(), 'keys.removePermissions', { keyId, permissions: ['rp404.keep', 'never.existed'] }), 404, 'permission_not_found');
    expect(error.detail).toContain('never.existed');
    expect((await getKey(srv(), keyId)).permissions).toEqual(['rp404.keep']);
    expectError(await call(srv(), 'permissions.getPermission', { permission: 'never.existed' }), 404, 'permission_not_found');
  });

  it('an unknown keyId → 404 key_not_found', async () => {
    expectError(await call(srv(), 'keys.removePermissions', { keyId: 'key_doesnotexist', permissions: ['a'] }), 404, 'key_not_found');
  });

  it("another workspace's * root key → 404", async () => {
    const { keyId } = await newKey(srv(), { permissions: ['rp404.f'] });
    expectError(await call(srv(), 'keys.removePermissions', { keyId, permissions: ['rp404.f'] }, { rootKey: await foreignStarKey(srv()) }), 404);
    expect((await getKey(srv(), keyId)).permissions).toEqual(['rp404.f']);
  });
});
