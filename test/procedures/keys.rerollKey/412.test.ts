// keys.rerollKey 412: a recoverable key (made while KEYWARD_VAULT_KEY was set) rerolled by a
// server started on the same data dir without the vault key.
import { afterAll, describe, expect, it } from 'vitest';
import { call, createApi, expectError, expectOk, startServer, stopAll } from '../../helpers/server.js';

afterAll(stopAll);

describe('keys.rerollKey 412', () => {
  it('no vault → 412 precondition_failed; the old key keeps working; non-recoverable keys still reroll', async () => {
    const withVault = await startServer({ env: { KEYWARD_VAULT_KEY: Buffer.alloc(32, 3).toString('base64') } });
    const apiId = await createApi(withVault);
    const rec = expectOk(await call(withVault, 'keys.createKey', { apiId, recoverable: true })) as { keyId: string; key: string };
    const plain = expectOk(await call(withVault, 'keys.createKey', { apiId })) as { keyId: string; key: string };
    expect(await withVault.stop()).toBe(0);

    const s = await startServer({ dataDir: withVault.dataDir, rootKey: withVault.rootKey });
    const error = expectError(await call(s, 'keys.rerollKey', { keyId: rec.keyId, expiration: 0 }), 412, 'precondition_failed');
    expect(error.detail).toContain('KEYWARD_VAULT_KEY');
    expect(expectOk(await call(s, 'keys.verifyKey', { key: rec.key })).code).toBe('VALID');
    expect(expectOk(await call(s, 'apis.listKeys', { apiId }))).toHaveLength(2);
    expectError(await call(s, 'keys.getKey', { keyId: rec.keyId, decrypt: true }), 412, 'precondition_failed');
    const fresh = expectOk(await call(s, 'keys.rerollKey', { keyId: plain.keyId, expiration: 0 })) as { key: string };
    expect(expectOk(await call(s, 'keys.verifyKey', { key: fresh.key })).code).toBe('VALID');
  });
});
