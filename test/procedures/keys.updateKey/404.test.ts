// keys.updateKey 404: unknown/deleted/foreign key, missing role.
import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, expectError, expectOk } from '../../helpers/server.js';
import { foreignStarKey, getKey, newKey, newRole } from '../../helpers/keys.js';

const srv = inProcessServer();

describe('keys.updateKey 404', () => {
  it('an unknown keyId → 404 key_not_found', async () => {
    expectError(await call(srv(), 'keys.updateKey', { keyId: 'key_doesnotexist', name: 'x' }), 404, 'key_not_found');
  });

  it('a deleted key → 404', async () => {
    const { keyId } = await newKey(srv());
    expectOk(await call(srv(), 'keys.deleteKey', { keyId }));
    expectError(await call(srv(), 'keys.updateKey', { keyId, name: 'x' }), 404, 'key_not_found');
  });

  it("another workspace's * root key → 404", async () => {
    const { keyId } = await newKey(srv(), { name: 'mine' });
    expectError(await call(srv(), 'keys.updateKey', { keyId, name: 'theirs' }, { rootKey: await foreignStarKey(srv()) }), 404, 'key_not_found');
    expect((await getKey(srv(), keyId)).name).toBe('mine');
  });

  it('roles that do not exist → 404 role_not_found; the whole update is refused', async () => {
    const role = await newRole(srv());
    const { keyId } = await newKey(srv(), { name: 'kept', roles: [role] });
    const error = expectError(await call(srv(), 'keys.updateKey', { keyId, name: 'changed', roles: [role, 'ghost_role'] }), 404, 'role_not_found');
    expect(error.detail).toContain('ghost_role');
    const got = await getKey(srv(), keyId);
    expect(got.name).toBe('kept');
    expect(got.roles).toEqual([role]);
  });
});
