// keys.setPermissions 200: replaces the direct permissions (missing ones created; [] clears).
import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, expectOk } from '../../helpers/server.js';
import { getKey, newKey, newRole, rootKeys, uniq, verify } from '../../helpers/keys.js';

const srv = inProcessServer();
const slugs = (list: { slug: string }[]) => list.map((p) => p.slug).sort();

describe('keys.setPermissions 200', () => {
  it('replaces and returns exactly the new direct set; role permissions stay', async () => {
    const role = await newRole(srv(), ['sp.role']);
    const { keyId, key } = await newKey(srv(), { permissions: ['sp.a', 'sp.b'], roles: [role] });
    const fresh = `${uniq('sp')}.new`;
    const list = expectOk(await call(srv(), 'keys.setPermissions', { keyId, permissions: ['sp.b', fresh] }));
    expect(slugs(list)).toEqual(['sp.b', fresh].sort());
    expect([...(await getKey(srv(), keyId)).permissions].sort()).toEqual(['sp.b', 'sp.role', fresh].sort());
    expect((await verify(srv(), key, { permissions: 'sp.a' })).code).toBe('INSUFFICIENT_PERMISSIONS');
    expect((await verify(srv(), key, { permissions: fresh })).code).toBe('VALID');
    expectOk(await call(srv(), 'permissions.getPermission', { permission: fresh }));
  });

  it('an empty list removes every direct permission', async () => {
    const { keyId } = await newKey(srv(), { permissions: ['sp.x'] });
    expect(expectOk(await call(srv(), 'keys.setPermissions', { keyId, permissions: [] }))).toEqual([]);
    expect(await getKey(srv(), keyId)).not.toHaveProperty('permissions');
  });

  it('update_key + add_permission_to_key + remove_permission_from_key is enough for existing slugs', async () => {
    const { keyId, apiId } = await newKey(srv(), { permissions: ['sp.old'] });
    await newKey(srv(), { permissions: ['sp.existing'] });
    const { keys } = await rootKeys(srv(), [[`apis.${apiId}.update_key`, 'rbac.*.add_permission_to_key', 'rbac.*.remove_permission_from_key']]);
    expect(slugs(expectOk(await call(srv(), 'keys.setPermissions', { keyId, permissions: ['sp.existing'] }, { rootKey: keys[0] })))).toEqual(['sp.existing']);
  });
});
