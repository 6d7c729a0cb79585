// keys.updateCredits 404: unknown/deleted/foreign key.
import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, expectError, expectOk } from '../../helpers/server.js';
import { foreignStarKey, getKey, newKey } from '../../helpers/keys.js';

const srv = inProcessServer();

describe('keys.updateCredits 404', () => {
  it('an unknown keyId → 404 key_not_found', async () => {
    expectError(await call(srv(), 'keys.updateCredits', { keyId: 'key_nothere', operation: 'set', value: 1 }), 404, 'key_not_found');
  });

  it('a deleted key → 404', async () => {
    const { keyId } = await newKey(srv(), { credits: { remaining: 1 } });
    expectOk(await call(srv(), 'keys.deleteKey', { keyId }));
    expectError(await call(srv(), 'keys.updateCredits', { keyId, operation: 'set', value: 1 }), 404, 'key_not_found');
  });

  it("another workspace's * root key → 404; balance unchanged", async () => {
    const { keyId } = await newKey(srv(), { credits: { remaining: 3 } });
    expectError(await call(srv(), 'keys.updateCredits', { keyId, operation: 'set', value: 1000 }, { rootKey: await foreignStarKey(srv()) }), 404, 'key_not_found');
    expect((await getKey(srv(), keyId)).credits.remaining).toBe(3);
  });
});
