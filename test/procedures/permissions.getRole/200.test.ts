import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, expectOk, rootKeyWith } from '../../helpers/server.js';

const srv = inProcessServer();

describe('permissions.getRole 200', () => {
  it('finds a role by id and by name, with its permissions as Permission objects', async () => {
    const perm = expectOk(await call(srv(), 'permissions.createPermission', { name: 'Read', slug: 'g.read', description: 'd' }));
    const role = expectOk(await call(srv(), 'permissions.createRole', { name: 'reader role', description: 'r', permissions: ['g.read'] }));
    const expected = { id: role.roleId, name: 'reader role', description: 'r', permissions: [{ id: perm.permissionId, name: 'Read', slug: 'g.read', description: 'd' }] };
    expect(expectOk(await call(srv(), 'permissions.getRole', { role: role.roleId }))).toEqual(expected);
    expect(expectOk(await call(srv(), 'permissions.getRole', { role: 'reader role' }))).toEqual(expected);
  });

  it('works with only rbac.*.read_role', async () => {
    expectOk(await call(srv(), 'permissions.createRole', { name: 'visible' }));
    const { key } = await rootKeyWith(srv(), ['rbac.*.read_role']);
    expect(expectOk(await call(srv(), 'permissions.getRole', { role: 'visible' }, { rootKey: key })).name).toBe('visible');
  });
});
