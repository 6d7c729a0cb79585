import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, expectError, expectOk } from '../../helpers/server.js';

const srv = inProcessServer();

describe('permissions.createPermission 409', () => {
  it('a second permission with the same slug → 409 permission_already_exists; the first is unchanged', async () => {
    const first = expectOk(await call(srv(), 'permissions.createPermission', { name: 'first', slug: 'dup.slug' }));
    const error = expectError(await call(srv(), 'permissions.createPermission', { name: 'second', slug: 'dup.slug' }), 409, 'permission_already_exists');
    expect(error.detail).toContain('dup.slug');
    expect(expectOk(await call(srv(), 'permissions.getPermission', { permission: 'dup.slug' }))).toEqual({ id: first.permissionId, name: 'first', slug: 'dup.slug' });
  });

  it('20 concurrent creates of one slug → exactly one 200 and 19 × 409', async () => {
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => call(srv(), 'permissions.createPermission', { name: `racer ${i}`, slug: 'race.slug' })));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(19);
    const list = expectOk(await call(srv(), 'permissions.listPermissions', { search: 'race.slug' })) as { slug: string }[];
    expect(list.filter((p) => p.slug === 'race.slug')).toHaveLength(1);
  });
});
