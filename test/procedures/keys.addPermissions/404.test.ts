// keys.addPermissions 404: unknown/deleted/foreign key.
import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, expectError, expectOk } from '../../helpers/server.js';
import { foreignStarKey, getKey, newKey } from '../../helpers/keys.js';

const srv = inProcessServer();

describe('keys.addPermissions 404', () => {
  it('an unknown keyId → 404 key_not_found', async () => {
    expectError(await call(srv(), 'keys.addPermissions', { keyId: 'key_doesnotexist', permissions: ['a.b'] }), 404, 'key_not_found');
  });

  it('a deleted key → 404', async () => {
    const { keyId } = await newKey(srv());
    expectOk(await call(srv(), 'keys.deleteKey', { keyId }));
    expectError(await call(srv(), 'keys.addPermissions', { keyId, permissions: ['a.b'] }), 404, 'key_not_found');
  });

  it("another workspace's * root key → 404; nothing added", async () => {
    const { keyId } = await newKey(srv());
    expectError(await call(srv(), 'keys.addPermissions', { keyId, permissions: ['foreign.perm'] }, { rootKey: await foreignStarKey(srv()) }), 404, 'key_not_found');
    expect(await getKey(srv(), keyId)).not.toHaveProperty('permissions');
  });
});
