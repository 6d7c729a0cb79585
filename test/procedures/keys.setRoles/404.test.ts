// keys.setRoles 404: unknown role (nothing changes), unknown/foreign key.
import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, expectError } from '../../helpers/server.js';
import { foreignStarKey, getKey, newKey, newRole } from '../../helpers/keys.js';

const srv = inProcessServer();

describe('keys.setRoles 404', () => {
  it('a role that does not exist → 404 role_not_found; roles unchanged', async () => {
    const role = await newRole(srv());
    const { keyId } = await newKey(srv(), { roles: [role] });
    const error = expectError(await call(srv(), 'keys.setRoles', { keyId, roles: ['no_such_role_s'] }), 404, 'role_not_found');
    expect(error.detail).toContain('no_such_role_s');
    expect((await getKey(srv(), keyId)).roles).toEqual([role]);
  });

  it('an unknown keyId → 404', async () => {
    expectError(await call(srv(), 'keys.setRoles', { keyId: 'key_doesnotexist', roles: [] }), 404, 'key_not_found');
  });

  it("another workspace's * root key → 404", async () => {
    const role = await newRole(srv());
    const { keyId } = await newKey(srv(), { roles: [role] });
    expectError(await call(srv(), 'keys.setRoles', { keyId, roles: [] }, { rootKey: await foreignStarKey(srv()) }), 404, 'key_not_found');
    expect((await getKey(srv(), keyId)).roles).toEqual([role]);
  });
});
