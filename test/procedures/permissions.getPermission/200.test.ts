import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, expectOk, rootKeyWith } from '../../helpers/server.js';

const srv = inProcessServer();

describe('permissions.getPermission 200', () => {
  it('finds a permission by id and by slug', async () => {
    const { permissionId } = expectOk(await call(srv(), 'permissions.createPermission', { name: 'Write', slug: 'docs.write', description: 'd' }));
    const expected = { id: permissionId, name: 'Write', slug: 'docs.write', description: 'd' };
    expect(expectOk(await call(srv(), 'permissions.getPermission', { permission: permissionId }))).toEqual(expected);
    expect(expectOk(await call(srv(), 'permissions.getPermission', { permission: 'docs.write' }))).toEqual(expected);
  });

  it('works with only rbac.*.read_permission', async () => {
    expectOk(await call(srv(), 'permissions.createPermission', { name: 'n', slug: 'readable' }));
    const { key } = await rootKeyWith(srv(), ['rbac.*.read_permission']);
    expect(expectOk(await call(srv(), 'permissions.getPermission', { permission: 'readable' }, { rootKey: key })).slug).toBe('readable');
  });

  it('finds a permission auto-created by keys.createKey', async () => {
    const apiId = expectOk(await call(srv(), 'apis.createApi', { name: 'auto-perm' })).apiId as string;
    expectOk(await call(srv(), 'keys.createKey', { apiId, permissions: ['auto.created'] }));
    expect(expectOk(await call(srv(), 'permissions.getPermission', { permission: 'auto.created' }))).toMatchObject({ slug: 'auto.created', name: 'auto.created' });
  });
});
