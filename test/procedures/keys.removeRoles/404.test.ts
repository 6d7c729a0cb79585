// keys.removeRoles 404: unknown role, unknown/foreign key.
import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, expectError } from '../../helpers/server.js';
import { foreignStarKey, getKey, newKey, newRole } from '../../helpers/keys.js';

const srv = inProcessServer();

describe('keys.removeRoles 404', () => {
  it('a role that does not exist → 404 role_not_found; nothing removed', async () => {
    const role = await newRole(srv());
    const { keyId } = await newKey(srv(), { roles: [role] });
    expectError(await call(srv(), 'keys.removeRoles', { keyId, roles: [role, 'nonexistent_role'] }), 404, 'role_not_found');
    expect((await getKey(srv(), keyId)).roles).toEqual([role]);
  });

  it('an unknown keyId → 404', async () => {
    const role = await newRole(srv());
    expectError(await call(srv(), 'keys.removeRoles', { keyId: 'key_doesnotexist', roles: [role] }), 404, 'key_not_found');
  });

  it("another workspace's * root key → 404", async () => {
    const role = await newRole(srv());
    const { keyId } = await newKey(srv(), { roles: [role] });
    const foreign = await foreignStarKey(srv());
    await call(srv(), 'permissions.createRole', { name: role }, { rootKey: foreign });
    expectError(await call(srv(), 'keys.removeRoles', { keyId, roles: [role] }, { rootKey: foreign }), 404, 'key_not_found');
    expect((await getKey(srv(), keyId)).roles).toEqual([role]);
  });
});
