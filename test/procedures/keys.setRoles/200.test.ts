// keys.setRoles 200: replaces the roles (an empty list removes all); returns the result.
import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, expectOk } from '../../helpers/server.js';
import { getKey, newKey, newRole, rootKeys, verify } from '../../helpers/keys.js';

const srv = inProcessServer();

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function setRoles(keyId: string, roles: string[], rootKey?: string): Promise<any[]> {
  return expectOk(await call(srv(), 'keys.setRoles', { keyId, roles }, rootKey === undefined ? {} : { rootKey }));
}

describe('keys.setRoles 200', () => {
  it('replaces the roles and returns exactly the new set', async () => {
    const [a, b, c] = await Promise.all([newRole(srv(), ['sr.a']), newRole(srv(), ['sr.b']), newRole(srv(), ['sr.c'])]) as [string, string, string];
    const { keyId, key } = await newKey(srv(), { roles: [a, b] });
    const roles = await setRoles(keyId, [b, c]);
    expect(roles.map((r) => r.name).sort()).toEqual([b, c].sort());
    expect(roles.find((r) => r.name === c).permissions[0]).toMatchObject({ slug: 'sr.c' });
    const got = await getKey(srv(), keyId);
    expect([...got.roles].sort()).toEqual([b, c].sort());
    expect([...got.permissions].sort()).toEqual(['sr.b', 'sr.c']);
    expect((await verify(srv(), key, { permissions: 'sr.a' })).code).toBe('INSUFFICIENT_PERMISSIONS');
    expect((await verify(srv(), key, { permissions: 'sr.c' })).code).toBe('VALID');
  });

  it('an empty list removes every role', async () => {
    const a = await newRole(srv());
    const { keyId } = await newKey(srv(), { roles: [a] });
    expect(await setRoles(keyId, [])).toEqual([]);
    expect(await getKey(srv(), keyId)).not.toHaveProperty('roles');
  });

  it('duplicates collapse', async () => {
    const a = await newRole(srv());
    const { keyId } = await newKey(srv());
    expect((await setRoles(keyId, [a, a])).map((r) => r.name)).toEqual([a]);
  });

  it('apis.<apiId>.update_key is enough', async () => {
    const a = await newRole(srv());
    const { keyId, apiId } = await newKey(srv());
    const { keys } = await rootKeys(srv(), [[`apis.${apiId}.update_key`]]);
    expect((await setRoles(keyId, [a], keys[0])).map((r) => r.name)).toEqual([a]);
  });
});
