import { describe, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, expectError, expectOk, foreignRootKey } from '../../helpers/server.js';

const srv = inProcessServer();

describe('permissions.getRole 404', () => {
  it('an unknown id or name → 404 role_not_found', async () => {
    for (const role of ['role_1111111111111111111111', 'nobody']) expectError(await call(srv(), 'permissions.getRole', { role }), 404, 'role_not_found');
  });

  it("another workspace's role is not found, by id or name", async () => {
    const { roleId } = expectOk(await call(srv(), 'permissions.createRole', { name: 'private-role' }));
    const foreign = await foreignRootKey(srv());
    for (const role of [roleId as string, 'private-role']) expectError(await call(srv(), 'permissions.getRole', { role }, { rootKey: foreign }), 404, 'role_not_found');
  });
});
