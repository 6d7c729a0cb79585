// keys.whoami 200: the record of the key given as plaintext, as keys.getKey shows it.
import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, expectOk } from '../../helpers/server.js';
import { getKey, newKey, newRole, rootKeys } from '../../helpers/keys.js';

const srv = inProcessServer();

describe('keys.whoami 200', () => {
  it('returns the same record as getKey (no plaintext)', async () => {
    const role = await newRole(srv(), ['w.read']);
    const { key, keyId } = await newKey(srv(), { prefix: 'who', name: 'me', externalId: 'whoami_user', roles: [role], permissions: ['w.own'], credits: { remaining: 5 }, meta: { a: 1 } });
    const data = expectOk(await call(srv(), 'keys.whoami', { key }));
    expect(data).toEqual(await getKey(srv(), keyId));
    expect(data).toMatchObject({ keyId, name: 'me', credits: { remaining: 5 }, identity: { externalId: 'whoami_user' } });
    expect(data).not.toHaveProperty('plaintext');
  });

  it('does not consume credits', async () => {
    const { key, keyId } = await newKey(srv(), { credits: { remaining: 2 } });
    expectOk(await call(srv(), 'keys.whoami', { key }));
    expectOk(await call(srv(), 'keys.whoami', { key }));
    expect((await getKey(srv(), keyId)).credits.remaining).toBe(2);
  });

  it('works for disabled and expired keys', async () => {
    const disabled = await newKey(srv(), { enabled: false });
    expect(expectOk(await call(srv(), 'keys.whoami', { key: disabled.key })).enabled).toBe(false);
    const expired = await newKey(srv(), { expires: 1 });
    expect(expectOk(await call(srv(), 'keys.whoami', { key: expired.key })).expires).toBe(1);
  });

  it('apis.<apiId>.read_key is enough', async () => {
    const { key, keyId, apiId } = await newKey(srv());
    const { keys } = await rootKeys(srv(), [[`apis.${apiId}.read_key`]]);
    expect(expectOk(await call(srv(), 'keys.whoami', { key }, { rootKey: keys[0] })).keyId).toBe(keyId);
  });
});
