// keys.updateKey 403: update_key missing or granted for another API.
import { beforeAll, describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, createApi } from '../../helpers/server.js';
import { expect403, getKey, newKey, rootKeys, type NewKey } from '../../helpers/keys.js';

const srv = inProcessServer();
let k: NewKey;
let rk: string[] = [];

beforeAll(async () => {
  k = await newKey(srv(), { name: 'before' });
  const otherApi = await createApi(srv());
  rk = (await rootKeys(srv(), [['apis.*.read_key', 'apis.*.create_key', 'apis.*.delete_key'], [`apis.${otherApi}.update_key`]])).keys;
});

describe('keys.updateKey 403', () => {
  it('no update_key grant → 403 naming update_key', async () => {
    expect403(await call(srv(), 'keys.updateKey', { keyId: k.keyId, name: 'x' }, { rootKey: rk[0] }), 'update_key');
  });

  it("apis.<otherApi>.update_key → 403 for this API's key; nothing changed", async () => {
    expect403(await call(srv(), 'keys.updateKey', { keyId: k.keyId, name: 'x' }, { rootKey: rk[1] }), `apis.${k.apiId}.update_key`);
    expect((await getKey(srv(), k.keyId)).name).toBe('before');
  });
});
