// keys.createKey 403: root keys without apis.<apiId|*>.create_key (or encrypt_key for recoverable).
import { beforeAll, describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, createApi, expectOk } from '../../helpers/server.js';
import { expect403, rootKeys } from '../../helpers/keys.js';

const srv = inProcessServer({ env: { KEYWARD_VAULT_KEY: Buffer.alloc(32, 7).toString('base64') } });
let apiId = '';
let otherApi = '';
const rk: Record<string, string> = {};

beforeAll(async () => {
  apiId = await createApi(srv());
  otherApi = await createApi(srv());
  const grants: Record<string, string[]> = {
    readOnly: ['apis.*.read_key', 'apis.*.read_api', 'apis.*.update_key'],
    otherApi: [`apis.${otherApi}.create_key`],
    thisApi: [`apis.${apiId}.create_key`],
    alias: [`api.${apiId}.create_key`],
    noEncrypt: ['apis.*.create_key'],
    encrypt: [`apis.${apiId}.create_key`, `apis.${apiId}.encrypt_key`],
  };
  const { keys } = await rootKeys(srv(), Object.values(grants));
  Object.keys(grants).forEach((name, i) => (rk[name] = keys[i] as string));
});

describe('keys.createKey 403', () => {
  it('a root key without create_key → 403 naming apis.*.create_key / apis.<apiId>.create_key', async () => {
    expect403(await call(srv(), 'keys.createKey', { apiId }, { rootKey: rk.readOnly }), 'create_key');
  });

  it('create_key for another API → 403', async () => {
    expect403(await call(srv(), 'keys.createKey', { apiId }, { rootKey: rk.otherApi }), `apis.${apiId}.create_key`);
    expectOk(await call(srv(), 'keys.createKey', { apiId: otherApi }, { rootKey: rk.otherApi }));
  });

  it('apis.<apiId>.create_key (and the api. alias) is enough', async () => {
    expectOk(await call(srv(), 'keys.createKey', { apiId }, { rootKey: rk.thisApi }));
    expectOk(await call(srv(), 'keys.createKey', { apiId }, { rootKey: rk.alias }));
  });

  it('recoverable:true without encrypt_key → 403 naming encrypt_key', async () => {
    expect403(await call(srv(), 'keys.createKey', { apiId, recoverable: true }, { rootKey: rk.noEncrypt }), 'encrypt_key');
    expectOk(await call(srv(), 'keys.createKey', { apiId, recoverable: true }, { rootKey: rk.encrypt }));
  });

  it('the refused requests created no key', async () => {
    const listed = expectOk(await call(srv(), 'apis.listKeys', { apiId }));
    expect(listed).toHaveLength(3);
  });
});
