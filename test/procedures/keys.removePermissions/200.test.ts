// keys.removePermissions 200: returns the remaining direct permissions.
import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, expectOk } from '../../helpers/server.js';
import { getKey, newKey, newRole, rootKeys, verify } from '../../helpers/keys.js';

const srv = inProcessServer();
const slugs = (list: { slug: string }[]) => list.map((p) => p.slug).sort();

describe('keys.removePermissions 200', () => {
  it('returns the remaining direct permissions; role permissions stay; verification follows', async () => {
    const role = await newRole(srv(), ['rp.role']);
    const { keyId, key } = await newKey(srv(), { permissions: ['rp.a', 'rp.b', 'rp.c'], roles: [role] });
    const left = expectOk(await call(srv(), 'keys.removePermissions', { keyId, permissions: ['rp.a', 'rp.c'] }));
    expect(slugs(left)).toEqual(['rp.b']);
    expect(left[0]).toMatchObject({ id: expect.stringMatching(/^perm_/), name: 'rp.b' });
    expect([...(await getKey(srv(), keyId)).permissions].sort()).toEqual(['rp.b', 'rp.role']);
    expect((await verify(srv(), key, { permissions: 'rp.a' })).code).toBe('INSUFFICIENT_PERMISSIONS');
  });

  it('removing an existing permission the key does not hold is a no-op; the last one leaves []', async () => {
    const { keyId } = await newKey(srv(), { permissions: ['rp.only'] });
    await newKey(srv(), { permissions: ['rp.elsewhere'] });
    expect(slugs(expectOk(await call(srv(), 'keys.removePermissions', { keyId, permissions: ['rp.elsewhere'] })))).toEqual(['rp.only']);
    expect(expectOk(await call(srv(), 'keys.removePermissions', { keyId, permissions: ['rp.only'] }))).toEqual([]);
    expect(await getKey(srv(), keyId)).not.toHaveProperty('permissions');
  });

  it('the permission itself survives removal from a key', async () => {
    const { keyId } = await newKey(srv(), { permissions: ['rp.survives'] });
    expectOk(await call(srv(), 'keys.removePermissions', { keyId, permissions: ['rp.survives'] }));
    expectOk(await call(srv(), 'permissions.getPermission', { permission: 'rp.survives' }));
  });

  it('update_key + rbac.*.remove_permission_from_key is enough', async () => {
    const { keyId, apiId } = await newKey(srv(), { permissions: ['rp.scoped'] });
    const { keys } = await rootKeys(srv(), [[`apis.${apiId}.update_key`, 'rbac.*.remove_permission_from_key']]);
    expect(expectOk(await call(srv(), 'keys.removePermissions', { keyId, permissions: ['rp.scoped'] }, { rootKey: keys[0] }))).toEqual([]);
  });
});
