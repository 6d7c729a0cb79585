// keys.deleteKey 200: {} and the key is gone at once (getKey 404, verifyKey NOT_FOUND, not listed).
import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, expectError, expectOk } from '../../helpers/server.js';
import { newKey, rootKeys, verify } from '../../helpers/keys.js';

const srv = inProcessServer();

describe('keys.deleteKey 200', () => {
  it('returns {}; getKey → 404, verifyKey → NOT_FOUND, whoami → 404, listKeys omits it', async () => {
    const { keyId, key, apiId } = await newKey(srv(), { credits: { remaining: 5 }, externalId: 'del_owner' });
    const other = await newKey(srv(), { apiId });
    expect((await verify(srv(), key)).code).toBe('VALID');
    expect(expectOk(await call(srv(), 'keys.deleteKey', { keyId }))).toEqual({});
    expectError(await call(srv(), 'keys.getKey', { keyId }), 404, 'key_not_found');
    expect(await verify(srv(), key)).toEqual({ valid: false, code: 'NOT_FOUND' });
    expectError(await call(srv(), 'keys.whoami', { key }), 404, 'key_not_found');
    const listed = expectOk(await call(srv(), 'apis.listKeys', { apiId })) as { keyId: string }[];
    expect(listed.map((k) => k.keyId)).toEqual([other.keyId]);
    expect(expectOk(await call(srv(), 'apis.listKeys', { apiId, externalId: 'del_owner' }))).toEqual([]);
    expect((await verify(srv(), other.key)).code).toBe('VALID');
  });

  it.each([true, false])('permanent:%s is accepted', async (permanent) => {
    const { keyId, key } = await newKey(srv());
    expect(expectOk(await call(srv(), 'keys.deleteKey', { keyId, permanent }))).toEqual({});
    expect((await verify(srv(), key)).code).toBe('NOT_FOUND');
  });

  it('apis.<apiId>.delete_key is enough', async () => {
    const { keyId, apiId } = await newKey(srv());
    const { keys } = await rootKeys(srv(), [[`apis.${apiId}.delete_key`]]);
    expect(expectOk(await call(srv(), 'keys.deleteKey', { keyId }, { rootKey: keys[0] }))).toEqual({});
  });
});
