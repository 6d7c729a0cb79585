// keys.updateCredits 403: update_key missing or for another API.
import { beforeAll, describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, createApi } from '../../helpers/server.js';
import { expect403, getKey, newKey, rootKeys, type NewKey } from '../../helpers/keys.js';

const srv = inProcessServer();
let k: NewKey;
let rk: string[] = [];
beforeAll(async () => {
  k = await newKey(srv(), { credits: { remaining: 5 } });
  const otherApi = await createApi(srv());
  rk = (await rootKeys(srv(), [['apis.*.read_key', 'apis.*.verify_key'], [`apis.${otherApi}.update_key`]])).keys;
});

describe('keys.updateCredits 403', () => {
  it('no update_key → 403', async () => {
    expect403(await call(srv(), 'keys.updateCredits', { keyId: k.keyId, operation: 'set', value: 100 }, { rootKey: rk[0] }), 'update_key');
  });

  it("apis.<otherApi>.update_key → 403 for this API's key; balance unchanged", async () => {
    expect403(await call(srv(), 'keys.updateCredits', { keyId: k.keyId, operation: 'increment', value: 100 }, { rootKey: rk[1] }), `apis.${k.apiId}.update_key`);
    expect((await getKey(srv(), k.keyId)).credits).toEqual({ remaining: 5 });
  });
});
