import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, createApi, expectError, expectOk, rootKeyWith } from '../../helpers/server.js';

const srv = inProcessServer();

describe('keys.verifyKey 403', () => {
  it('a root key with no verify grant → 403 naming the permission', async () => {
    const { key: rk } = await rootKeyWith(srv(), ['apis.*.create_key', 'apis.*.read_key']);
    const error = expectError(await call(srv(), 'keys.verifyKey', { key: 'anything_at_all' }, { rootKey: rk }), 403, 'insufficient_permissions');
    expect(error.title).toBe('Forbidden');
    expect(error.detail).toContain('verify_key');
  });

  it('a verify grant on another resource type does not count', async () => {
    const { key: rk } = await rootKeyWith(srv(), ['ratelimits.*.verify_key']);
    expectError(await call(srv(), 'keys.verifyKey', { key: 'anything_at_all' }, { rootKey: rk }), 403, 'insufficient_permissions');
  });

  it('the 403 does not depend on the key existing, and consumes nothing', async () => {
    const apiId = await createApi(srv());
    const { key, keyId } = expectOk(await call(srv(), 'keys.createKey', { apiId, credits: { remaining: 3 } })) as { key: string; keyId: string };
    const { key: rk } = await rootKeyWith(srv(), ['apis.*.read_key']);
    expectError(await call(srv(), 'keys.verifyKey', { key }, { rootKey: rk }), 403, 'insufficient_permissions');
    expect(expectOk(await call(srv(), 'keys.getKey', { keyId })).credits.remaining).toBe(3);
  });

  it('apis.<otherApi>.verify_key → 200 NOT_FOUND for this API\'s key (existence is not leaked), nothing consumed', async () => {
    const apiId = await createApi(srv());
    const other = await createApi(srv());
    const { key, keyId } = expectOk(await call(srv(), 'keys.createKey', { apiId, credits: { remaining: 3 } })) as { key: string; keyId: string };
    const { key: rk } = await rootKeyWith(srv(), [`apis.${other}.verify_key`]);
    const res = await call(srv(), 'keys.verifyKey', { key }, { rootKey: rk });
    expect(res.status).toBe(200);
    expect(res.json.data).toEqual({ valid: false, code: 'NOT_FOUND' });
    expect(expectOk(await call(srv(), 'keys.getKey', { keyId })).credits.remaining).toBe(3);
  });
});
