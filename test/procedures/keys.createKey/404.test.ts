// keys.createKey 404: unknown / deleted / foreign API, missing role.
import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, createApi, expectError, expectOk } from '../../helpers/server.js';
import { foreignStarKey } from '../../helpers/keys.js';

const srv = inProcessServer();

describe('keys.createKey 404', () => {
  it.each([
    ['an unknown apiId', 'api_doesnotexist'],
    ['a 3-char apiId (valid shape, no such API)', 'abc'],
    ['a 255-char apiId (valid shape, no such API)', 'a'.repeat(255)],
  ])('%s → 404 api_not_found', async (_why, apiId) => {
    expectError(await call(srv(), 'keys.createKey', { apiId }), 404, 'api_not_found');
  });

  it('a deleted API → 404 api_not_found', async () => {
    const apiId = await createApi(srv());
    expectOk(await call(srv(), 'apis.deleteApi', { apiId }));
    expectError(await call(srv(), 'keys.createKey', { apiId }), 404, 'api_not_found');
  });

  it('an API of another workspace (its * root key) → 404 api_not_found', async () => {
    const apiId = await createApi(srv());
    const foreign = await foreignStarKey(srv());
    expectError(await call(srv(), 'keys.createKey', { apiId }, { rootKey: foreign }), 404, 'api_not_found');
  });

  it('a role that does not exist → 404 role_not_found naming it; nothing is created', async () => {
    const apiId = await createApi(srv());
    const error = expectError(await call(srv(), 'keys.createKey', { apiId, roles: ['no_such_role'], permissions: ['fresh.perm.404'] }), 404, 'role_not_found');
    expect(error.detail).toContain('no_such_role');
    expect(expectOk(await call(srv(), 'apis.listKeys', { apiId }))).toEqual([]);
    expectError(await call(srv(), 'permissions.getPermission', { permission: 'fresh.perm.404' }), 404);
  });
});
