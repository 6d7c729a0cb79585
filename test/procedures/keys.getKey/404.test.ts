// keys.getKey 404: unknown, deleted, of a deleted API, or of another workspace.
import { describe, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, expectError, expectOk } from '../../helpers/server.js';
import { foreignStarKey, newKey } from '../../helpers/keys.js';

const srv = inProcessServer();

describe('keys.getKey 404', () => {
  it('an unknown keyId → 404 key_not_found', async () => {
    expectError(await call(srv(), 'keys.getKey', { keyId: 'key_doesnotexist' }), 404, 'key_not_found');
  });

  it('a deleted key → 404', async () => {
    const { keyId } = await newKey(srv());
    expectOk(await call(srv(), 'keys.deleteKey', { keyId }));
    expectError(await call(srv(), 'keys.getKey', { keyId }), 404, 'key_not_found');
  });

  it('a key of a deleted API → 404', async () => {
    const { keyId, apiId } = await newKey(srv());
    expectOk(await call(srv(), 'apis.deleteApi', { apiId }));
    expectError(await call(srv(), 'keys.getKey', { keyId }), 404, 'key_not_found');
  });

  it("another workspace's * root key → 404 (with or without decrypt)", async () => {
    const { keyId } = await newKey(srv());
    const foreign = await foreignStarKey(srv());
    expectError(await call(srv(), 'keys.getKey', { keyId }, { rootKey: foreign }), 404, 'key_not_found');
    expectError(await call(srv(), 'keys.getKey', { keyId, decrypt: true }, { rootKey: foreign }), 404, 'key_not_found');
  });
});
