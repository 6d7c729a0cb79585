// keys.deleteKey 403: delete_key missing or for another API.
import { beforeAll, describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, createApi } from '../../helpers/server.js';
import { expect403, newKey, rootKeys, verify, type NewKey } from '../../helpers/keys.js';

const srv = inProcessServer();
let k: NewKey;
let rk: string[] = [];
beforeAll(async () => {
  k = await newKey(srv());
  const otherApi = await createApi(srv());
  rk = (await rootKeys(srv(), [['apis.*.update_key', 'apis.*.read_key', 'apis.*.delete_api'], [`apis.${otherApi}.delete_key`]])).keys;
});

describe('keys.deleteKey 403', () => {
  it('no delete_key → 403', async () => {
    expect403(await call(srv(), 'keys.deleteKey', { keyId: k.keyId }, { rootKey: rk[0] }), 'delete_key');
  });

  it("apis.<otherApi>.delete_key → 403 for this API's key; the key still verifies", async () => {
    expect403(await call(srv(), 'keys.deleteKey', { keyId: k.keyId }, { rootKey: rk[1] }), `apis.${k.apiId}.delete_key`);
    expect((await verify(srv(), k.key)).code).toBe('VALID');
  });
});
