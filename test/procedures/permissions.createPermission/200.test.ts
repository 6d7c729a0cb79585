import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, expectOk, foreignRootKey } from '../../helpers/server.js';

const srv = inProcessServer();

describe('permissions.createPermission 200', () => {
  it('returns permissionId plus the permission, which getPermission then finds', async () => {
    const data = expectOk(await call(srv(), 'permissions.createPermission', { name: 'Read documents', slug: 'documents.read', description: 'may read' }));
    expect(data).toEqual({ permissionId: expect.stringMatching(/^perm_/), id: data.permissionId, name: 'Read documents', slug: 'documents.read', description: 'may read' });
    expect(expectOk(await call(srv(), 'permissions.getPermission', { permission: data.permissionId }))).toEqual({ id: data.permissionId, name: 'Read documents', slug: 'documents.read', description: 'may read' });
  });

  it('omits description when none was given', async () => {
    const data = expectOk(await call(srv(), 'permissions.createPermission', { name: 'n', slug: 'no.description' }));
    expect(Object.keys(data).sort()).toEqual(['id', 'name', 'permissionId', 'slug']);
  });

  it('accepts every slug character and the bounds at their edges', async () => {
    const slugs = ['a', 's'.repeat(128), 'aZ09_:-.*'];
    for (const slug of slugs) {
      const data = expectOk(await call(srv(), 'permissions.createPermission', { name: 'x'.repeat(512), slug, description: 'd'.repeat(512) }));
      expect(data.slug).toBe(slug);
    }
    expect(expectOk(await call(srv(), 'permissions.createPermission', { name: 'x', slug: 'empty.description', description: '' })).description).toBe('');
  });

  it('slugs are unique per workspace: another workspace may use the same slug', async () => {
    const foreign = await foreignRootKey(srv());
    const mine = expectOk(await call(srv(), 'permissions.createPermission', { name: 'shared', slug: 'shared.slug' }));
    const theirs = expectOk(await call(srv(), 'permissions.createPermission', { name: 'shared', slug: 'shared.slug' }, { rootKey: foreign }));
    expect(theirs.permissionId).not.toBe(mine.permissionId);
  });
});
