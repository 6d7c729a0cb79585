// keys.whoami 403: read_key missing or granted for another API.
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
  rk = (await rootKeys(srv(), [['apis.*.verify_key', 'apis.*.update_key'], [`apis.${otherApi}.read_key`]])).keys;
});

describe('keys.whoami 403', () => {
  it('no read_key grant → 403 naming read_key', async () => {
    expect403(await call(srv(), 'keys.whoami', { key: k.key }, { rootKey: rk[0] }), 'read_key');
  });

  it("apis.<otherApi>.read_key → 403 for this API's key", async () => {
    expect403(await call(srv(), 'keys.whoami', { key: k.key }, { rootKey: rk[1] }), `apis.${k.apiId}.read_key`);
  });
});
