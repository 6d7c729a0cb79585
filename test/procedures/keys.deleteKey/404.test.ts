// keys.deleteKey 404: unknown, already deleted, foreign.
import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, expectError, expectOk } from '../../helpers/server.js';
import { foreignStarKey, newKey, verify } from '../../helpers/keys.js';

const srv = inProcessServer();

describe('keys.deleteKey 404', () => {
  it('an unknown keyId → 404', async () => {
    expectError(await call(srv(), 'keys.deleteKey', { keyId: 'key_doesnotexist' }), 404, 'key_not_found');
  });

  it('deleting twice → the second is 404', async () => {
    const { keyId } = await newKey(srv());
    expectOk(await call(srv(), 'keys.deleteKey', { keyId }));
    expectError(await call(srv(), 'keys.deleteKey', { keyId }), 404, 'key_not_found');
  });

  it("another workspace's * root key → 404; the key still verifies", async () => {
    const { keyId, key } = await newKey(srv());
    expectError(await call(srv(), 'keys.deleteKey', { keyId }, { rootKey: await foreignStarKey(srv()) }), 404, 'key_not_found');
    expect((await verify(srv(), key)).code).toBe('VALID');
  });
});
