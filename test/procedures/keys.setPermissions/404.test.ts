// keys.setPermissions 404: unknown/foreign key.
import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, expectError } from '../../helpers/server.js';
import { foreignStarKey, getKey, newKey } from '../../helpers/keys.js';

const srv = inProcessServer();

describe('keys.setPermissions 404', () => {
  it('an unknown keyId → 404 key_not_found', async () => {
    expectError(await call(srv(), 'keys.setPermissions', { keyId: 'key_doesnotexist', permissions: [] }), 404, 'key_not_found');
  });

  it("another workspace's * root key → 404; permissions unchanged", async () => {
    const { keyId } = await newKey(srv(), { permissions: ['sp404.a'] });
    expectError(await call(srv(), 'keys.setPermissions', { keyId, permissions: [] }, { rootKey: await foreignStarKey(srv()) }), 404, 'key_not_found');
    expect((await getKey(srv(), keyId)).permissions).toEqual(['sp404.a']);
  });
});
