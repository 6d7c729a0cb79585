// keys.getKey 412: decrypt:true on a server without KEYWARD_VAULT_KEY.
import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, expectError, expectOk } from '../../helpers/server.js';
import { newKey } from '../../helpers/keys.js';

const srv = inProcessServer();

describe('keys.getKey 412', () => {
  it('decrypt:true without a vault → 412 precondition_failed naming KEYWARD_VAULT_KEY', async () => {
    const { keyId } = await newKey(srv());
    const error = expectError(await call(srv(), 'keys.getKey', { keyId, decrypt: true }), 412, 'precondition_failed');
    expect(error.detail).toContain('KEYWARD_VAULT_KEY');
    expect(expectOk(await call(srv(), 'keys.getKey', { keyId, decrypt: false })).keyId).toBe(keyId);
  });
});
