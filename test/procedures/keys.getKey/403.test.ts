// keys.getKey 403: read_key missing (whether or not the key exists, as for the other key-level
// procedures) or granted for another API; decrypt without decrypt_key.
import { beforeAll, describe, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, createApi } from '../../helpers/server.js';
import { expect403, newKey, rootKeys, type NewKey } from '../../helpers/keys.js';

const srv = inProcessServer();
let k: NewKey;
let rk: string[] = [];

beforeAll(async () => {
  k = await newKey(srv());
  const otherApi = await createApi(srv());
  rk = (await rootKeys(srv(), [['apis.*.create_key', 'apis.*.update_key', 'apis.*.read_api'], [`apis.${otherApi}.read_key`], [`apis.${k.apiId}.read_key`]])).keys;
});

describe('keys.getKey 403', () => {
  it('no read_key grant → 403 naming read_key', async () => {
    expect403(await call(srv(), 'keys.getKey', { keyId: k.keyId }, { rootKey: rk[0] }), 'read_key');
  });

  it('no read_key grant → 403 for a key that does not exist too (existence is not revealed)', async () => {
    const missing = 'key_1111111111111111111111';
    expect403(await call(srv(), 'keys.getKey', { keyId: missing }, { rootKey: rk[0] }), 'read_key');
    expect403(await call(srv(), 'keys.whoami', { key: 'sk_not_a_key_of_this_workspace' }, { rootKey: rk[0] }), 'read_key');
    expect403(await call(srv(), 'keys.deleteKey', { keyId: missing }, { rootKey: rk[1] }), 'delete_key');
    expect403(await call(srv(), 'keys.rerollKey', { keyId: missing, expiration: 0 }, { rootKey: rk[1] }), 'create_key');
    expect403(await call(srv(), 'keys.updateCredits', { keyId: missing, operation: 'set', value: 1 }, { rootKey: rk[1] }), 'update_key');
  });

  it('apis.<otherApi>.read_key → 403 for this API\'s key', async () => {
    expect403(await call(srv(), 'keys.getKey', { keyId: k.keyId }, { rootKey: rk[1] }), `apis.${k.apiId}.read_key`);
  });

  it('decrypt:true with read_key but no decrypt_key → 403 naming decrypt_key', async () => {
    expect403(await call(srv(), 'keys.getKey', { keyId: k.keyId, decrypt: true }, { rootKey: rk[2] }), 'decrypt_key');
  });
});
