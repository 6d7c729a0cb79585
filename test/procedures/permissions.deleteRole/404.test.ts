import { describe, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, expectError, expectOk, foreignRootKey } from '../../helpers/server.js';

const srv = inProcessServer();

describe('permissions.deleteRole 404', () => {
  it('unknown → 404; deleting twice → 404 the second time', async () => {
    expectError(await call(srv(), 'permissions.deleteRole', { role: 'ghost' }), 404, 'role_not_found');
    expectOk(await call(srv(), 'permissions.createRole', { name: 'once' }));
    expectOk(await call(srv(), 'permissions.deleteRole', { role: 'once' }));
    expectError(await call(srv(), 'permissions.deleteRole', { role: 'once' }), 404, 'role_not_found');
  });

  it("another workspace cannot delete this workspace's role", async () => {
    const { roleId } = expectOk(await call(srv(), 'permissions.createRole', { name: 'guarded' }));
    const foreign = await foreignRootKey(srv());
    for (const role of [roleId as string, 'guarded']) expectError(await call(srv(), 'permissions.deleteRole', { role }, { rootKey: foreign }), 404, 'role_not_found');
    expectOk(await call(srv(), 'permissions.getRole', { role: roleId }));
  });
});
