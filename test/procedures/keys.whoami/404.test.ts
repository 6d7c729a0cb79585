// keys.whoami 404: unknown key string, deleted key, another workspace.
import { describe, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, expectError, expectOk } from '../../helpers/server.js';
import { foreignStarKey, newKey } from '../../helpers/keys.js';

const srv = inProcessServer();

describe('keys.whoami 404', () => {
  it('an unknown key → 404 key_not_found', async () => {
    expectError(await call(srv(), 'keys.whoami', { key: 'nope_1234567890abcdef' }), 404, 'key_not_found');
  });

  it('a deleted key → 404', async () => {
    const { key, keyId } = await newKey(srv());
    expectOk(await call(srv(), 'keys.deleteKey', { keyId }));
    expectError(await call(srv(), 'keys.whoami', { key }), 404, 'key_not_found');
  });

  it('a key of a deleted API → 404', async () => {
    const { key, apiId } = await newKey(srv());
    expectOk(await call(srv(), 'apis.deleteApi', { apiId }));
    expectError(await call(srv(), 'keys.whoami', { key }), 404, 'key_not_found');
  });

  it("another workspace's * root key → 404", async () => {
    const { key } = await newKey(srv());
    expectError(await call(srv(), 'keys.whoami', { key }, { rootKey: await foreignStarKey(srv()) }), 404, 'key_not_found');
  });
});
