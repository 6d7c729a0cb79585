// keys.removeRoles 200: returns the remaining roles; removing a role the key lacks is a no-op.
import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, expectOk } from '../../helpers/server.js';
import { getKey, newKey, newRole, rootKeys, verify } from '../../helpers/keys.js';

const srv = inProcessServer();

describe('keys.removeRoles 200', () => {
  it('returns the remaining roles; getKey and verification follow at once', async () => {
    const r1 = await newRole(srv(), ['rr.one']);
    const r2 = await newRole(srv(), ['rr.two']);
    const { keyId, key } = await newKey(srv(), { roles: [r1, r2] });
    const left = expectOk(await call(srv(), 'keys.removeRoles', { keyId, roles: [r1] })) as { id: string; name: string }[];
    expect(left.map((r) => r.name)).toEqual([r2]);
    expect(left[0]?.id).toMatch(/^role_/);
    const got = await getKey(srv(), keyId);
    expect(got.roles).toEqual([r2]);
    expect(got.permissions).toEqual(['rr.two']);
    expect((await verify(srv(), key, { permissions: 'rr.one' })).code).toBe('INSUFFICIENT_PERMISSIONS');
  });

  it('removing a role the key does not have is a no-op; removing the last leaves []', async () => {
    const r1 = await newRole(srv());
    const other = await newRole(srv());
    const { keyId } = await newKey(srv(), { roles: [r1] });
    expect((expectOk(await call(srv(), 'keys.removeRoles', { keyId, roles: [other] })) as { name: string }[]).map((r) => r.name)).toEqual([r1]);
    expect(expectOk(await call(srv(), 'keys.removeRoles', { keyId, roles: [r1] }))).toEqual([]);
    expect(await getKey(srv(), keyId)).not.toHaveProperty('roles');
  });

  it('apis.<apiId>.update_key is enough (no rbac grant needed)', async () => {
    const r1 = await newRole(srv());
    const { keyId, apiId } = await newKey(srv(), { roles: [r1] });
    const { keys } = await rootKeys(srv(), [[`apis.${apiId}.update_key`]]);
    expect(expectOk(await call(srv(), 'keys.removeRoles', { keyId, roles: [r1] }, { rootKey: keys[0] }))).toEqual([]);
  });
});
