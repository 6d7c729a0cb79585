// keys.createKey 412: recoverable:true on a server started without KEYWARD_VAULT_KEY.
import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, createApi, expectError, expectOk } from '../../helpers/server.js';

const srv = inProcessServer();

describe('keys.createKey 412', () => {
  it('recoverable:true without a vault → 412 precondition_failed naming KEYWARD_VAULT_KEY; no key made', async () => {
    const apiId = await createApi(srv());
    const error = expectError(await call(srv(), 'keys.createKey', { apiId, recoverable: true }), 412, 'precondition_failed');
    expect(error.detail).toContain('KEYWARD_VAULT_KEY');
    expect(expectOk(await call(srv(), 'apis.listKeys', { apiId }))).toEqual([]);
  });

  it('recoverable:false works without a vault', async () => {
    const apiId = await createApi(srv());
    expectOk(await call(srv(), 'keys.createKey', { apiId, recoverable: false }));
  });
});
