// keys.rerollKey 404: unknown/deleted/foreign key.
import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, expectError, expectOk } from '../../helpers/server.js';
import { foreignStarKey, newKey, verify } from '../../helpers/keys.js';

const srv = inProcessServer();

describe('keys.rerollKey 404', () => {
  it('an unknown keyId → 404 key_not_found', async () => {
    expectError(await call(srv(), 'keys.rerollKey', { keyId: 'key_doesnotexist', expiration: 0 }), 404, 'key_not_found');
  });

  it('a deleted key → 404', async () => {
    const { keyId } = await newKey(srv());
    expectOk(await call(srv(), 'keys.deleteKey', { keyId }));
    expectError(await call(srv(), 'keys.rerollKey', { keyId, expiration: 0 }), 404, 'key_not_found');
  });

  it("another workspace's * root key → 404; the key keeps working", async () => {
    const { keyId, key } = await newKey(srv());
    expectError(await call(srv(), 'keys.rerollKey', { keyId, expiration: 0 }, { rootKey: await foreignStarKey(srv()) }), 404, 'key_not_found');
    expect((await verify(srv(), key)).code).toBe('VALID');
  });
});
