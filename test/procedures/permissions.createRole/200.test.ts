import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, expectOk, foreignRootKey } from '../../helpers/server.js';

const srv = inProcessServer();

describe('permissions.createRole 200', () => {
  it('returns roleId plus the role; without permissions there is no permissions field', async () => {
    const data = expectOk(await call(srv(), 'permissions.createRole', { name: 'viewer', description: 'reads' }));
    expect(data).toEqual({ roleId: expect.stringMatching(/^role_/), id: data.roleId, name: 'viewer', description: 'reads' });
    expect(expectOk(await call(srv(), 'permissions.getRole', { role: data.roleId }))).toEqual({ id: data.roleId, name: 'viewer', description: 'reads' });
  });

  it('missing permissions are created (name = slug), existing ones are reused, duplicates collapse', async () => {
    const existing = expectOk(await call(srv(), 'permissions.createPermission', { name: 'Existing', slug: 'role.existing' }));
    const data = expectOk(await call(srv(), 'permissions.createRole', { name: 'mixed', permissions: ['role.existing', 'role.new', 'role.new'] }));
    expect(data.permissions).toHaveLength(2);
    expect(data.permissions[0]).toEqual({ id: existing.permissionId, name: 'Existing', slug: 'role.existing' });
    expect(data.permissions[1]).toMatchObject({ id: expect.stringMatching(/^perm_/), name: 'role.new', slug: 'role.new' });
    expect(expectOk(await call(srv(), 'permissions.getPermission', { permission: 'role.new' })).id).toBe(data.permissions[1].id);
  });

  it('bounds at their edges: name 1 and 100 characters, description 512, empty permissions list', async () => {
    for (const body of [{ name: 'r' }, { name: 'r'.repeat(128), description: 'd'.repeat(512), permissions: [] }, { name: 'ü name with spaces' }]) {
      expect(expectOk(await call(srv(), 'permissions.createRole', body)).name).toBe(body.name);
    }
  });

  it('1000 permissions in one role', async () => {
    const permissions = Array.from({ length: 1000 }, (_, i) => `bulk.p${i}`);
    const data = expectOk(await call(srv(), 'permissions.createRole', { name: 'bulk', permissions }));
    expect(data.permissions).toHaveLength(1000);
  });

  it('role names are unique per workspace only', async () => {
    const foreign = await foreignRootKey(srv());
    expectOk(await call(srv(), 'permissions.createRole', { name: 'shared-name' }));
    expectOk(await call(srv(), 'permissions.createRole', { name: 'shared-name' }, { rootKey: foreign }));
  });
});
