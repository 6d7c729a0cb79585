// keys.rerollKey 403: create_key on the key's API is required.
import { beforeAll, describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, createApi, expectOk } from '../../helpers/server.js';
import { expect403, newKey, rootKeys, verify, type NewKey } from '../../helpers/keys.js';

const srv = inProcessServer({ env: { KEYWARD_VAULT_KEY: Buffer.alloc(32, 9).toString('base64') } });
let k: NewKey;
let recoverable: NewKey;
let rk: string[] = [];
beforeAll(async () => {
  k = await newKey(srv());
  recoverable = await newKey(srv(), { recoverable: true });
  const otherApi = await createApi(srv());
  rk = (await rootKeys(srv(), [['apis.*.update_key', 'apis.*.read_key', 'apis.*.delete_key'], [`apis.${otherApi}.create_key`], ['apis.*.create_key']])).keys;
});

describe('keys.rerollKey 403', () => {
  it('no create_key → 403 naming create_key', async () => {
    expect403(await call(srv(), 'keys.rerollKey', { keyId: k.keyId, expiration: 0 }, { rootKey: rk[0] }), 'create_key');
  });

  it("create_key of another API → 403; the old key is untouched and no key was added", async () => {
    expect403(await call(srv(), 'keys.rerollKey', { keyId: k.keyId, expiration: 0 }, { rootKey: rk[1] }), `apis.${k.apiId}.create_key`);
    expect((await verify(srv(), k.key)).code).toBe('VALID');
    expect(expectOk(await call(srv(), 'apis.listKeys', { apiId: k.apiId }))).toHaveLength(1);
  });

  it('a recoverable key without encrypt_key → 403 naming encrypt_key (create_key alone is not enough)', async () => {
    expect403(await call(srv(), 'keys.rerollKey', { keyId: recoverable.keyId, expiration: 0 }, { rootKey: rk[2] }), 'encrypt_key');
    expect((await verify(srv(), recoverable.key)).code).toBe('VALID');
    expectOk(await call(srv(), 'keys.rerollKey', { keyId: k.keyId, expiration: 60_000 }, { rootKey: rk[2] }));
  });
});
