// keys.addRoles 404: roles must exist (role_not_found, nothing added); unknown/foreign key.
import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, expectError } from '../../helpers/server.js';
import { foreignStarKey, getKey, newKey, newRole } from '../../helpers/keys.js';

const srv = inProcessServer();

describe('keys.addRoles 404', () => {
  it('a role that does not exist → 404 role_not_found naming it; no role is added or created', async () => {
    const real = await newRole(srv());
    const { keyId } = await newKey(srv());
    const error = expectError(await call(srv(), 'keys.addRoles', { keyId, roles: [real, 'missing_role_x'] }), 404, 'role_not_found');
    expect(error.detail).toContain('missing_role_x');
    expect(await getKey(srv(), keyId)).not.toHaveProperty('roles');
    expectError(await call(srv(), 'permissions.getRole', { role: 'missing_role_x' }), 404, 'role_not_found');
  });

  it('an unknown keyId → 404 key_not_found', async () => {
    const role = await newRole(srv());
    expectError(await call(srv(), 'keys.addRoles', { keyId: 'key_doesnotexist', roles: [role] }), 404, 'key_not_found');
  });

  it("another workspace's * root key → 404 (its own role of the same name does not help)", async () => {
    const role = await newRole(srv());
    const { keyId } = await newKey(srv());
    const foreign = await foreignStarKey(srv());
    expectError(await call(srv(), 'keys.addRoles', { keyId, roles: [role] }, { rootKey: foreign }), 404);
    await call(srv(), 'permissions.createRole', { name: role }, { rootKey: foreign });
    expectError(await call(srv(), 'keys.addRoles', { keyId, roles: [role] }, { rootKey: foreign }), 404, 'key_not_found');
    expect(await getKey(srv(), keyId)).not.toHaveProperty('roles');
  });
});
