import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, createApi, expectError, expectOk } from '../../helpers/server.js';

const srv = inProcessServer();

describe('permissions.deleteRole 200', () => {
  it('returns {}; the role is gone by id and name, its permissions stay, the name can be reused', async () => {
    const { roleId } = expectOk(await call(srv(), 'permissions.createRole', { name: 'temp', permissions: ['temp.perm'] }));
    expect(expectOk(await call(srv(), 'permissions.deleteRole', { role: roleId }))).toEqual({});
    for (const role of [roleId as string, 'temp']) expectError(await call(srv(), 'permissions.getRole', { role }), 404, 'role_not_found');
    expectOk(await call(srv(), 'permissions.getPermission', { permission: 'temp.perm' }));
    expect(expectOk(await call(srv(), 'permissions.listRoles', { search: 'temp' }))).toEqual([]);
    expect(expectOk(await call(srv(), 'permissions.createRole', { name: 'temp' })).roleId).not.toBe(roleId);
  });

  it('by name: removes the role from every key at once (getKey, verifyKey); direct permissions stay', async () => {
    const apiId = await createApi(srv());
    expectOk(await call(srv(), 'permissions.createRole', { name: 'writer', permissions: ['w.write'] }));
    expectOk(await call(srv(), 'permissions.createRole', { name: 'other' }));
    const k1 = expectOk(await call(srv(), 'keys.createKey', { apiId, roles: ['writer', 'other'], permissions: ['w.direct'] }));
    const k2 = expectOk(await call(srv(), 'keys.createKey', { apiId, roles: ['writer'] }));
    expect(expectOk(await call(srv(), 'keys.verifyKey', { key: k2.key, permissions: 'w.write' })).valid).toBe(true);

    expectOk(await call(srv(), 'permissions.deleteRole', { role: 'writer' }));

    const got1 = expectOk(await call(srv(), 'keys.getKey', { keyId: k1.keyId }));
    expect(got1.roles).toEqual(['other']);
    expect(got1.permissions).toEqual(['w.direct']);
    const got2 = expectOk(await call(srv(), 'keys.getKey', { keyId: k2.keyId }));
    expect(got2.roles).toBeUndefined();
    expect(got2.permissions).toBeUndefined();
    expect(expectOk(await call(srv(), 'keys.verifyKey', { key: k2.key, permissions: 'w.write' }))).toMatchObject({ valid: false, code: 'INSUFFICIENT_PERMISSIONS' });
    // A new role of the same name is not attached to the old keys.
    expectOk(await call(srv(), 'permissions.createRole', { name: 'writer', permissions: ['w.write'] }));
    expect(expectOk(await call(srv(), 'keys.verifyKey', { key: k2.key, permissions: 'w.write' })).valid).toBe(false);
  });
});
