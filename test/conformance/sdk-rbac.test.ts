// @unkey/api against a live keyward for the permissions.* and identities.* namespaces,
// including their paginated iterators: every call must parse with no SDK validation error.
import { Unkey } from '@unkey/api';
import * as errors from '@unkey/api/models/errors';
import { describe, expect, it } from 'vitest';
import { liveServer } from '../helpers/live.js';

const srv = liveServer();
const sdk = () => new Unkey({ serverURL: srv().url, rootKey: srv().rootKey, retryConfig: { strategy: 'none' } });

/** Every page of an SDK list iterator (bounded, so a cursor loop fails the test). */
async function allPages<P>(first: AsyncIterable<P>): Promise<P[]> {
  const pages: P[] = [];
  for await (const page of first) {
    pages.push(page);
    if (pages.length > 50) throw new Error('the iterator does not stop');
  }
  return pages;
}

describe('@unkey/api permissions.* against keyward', () => {
  it('creates, reads, lists (every page), updates and deletes permissions and roles', async () => {
    const u = sdk();
    const tag = `sdk${Date.now()}`;
    const slugs = Array.from({ length: 5 }, (_, i) => `${tag}.p${i}`);
    const ids: string[] = [];
    for (const slug of slugs) {
      const res = await u.permissions.createPermission({ name: `name ${slug}`, slug, description: 'from the SDK' });
      expect(res.data.permissionId).toMatch(/^perm_/);
      ids.push(res.data.permissionId);
    }
    const got = await u.permissions.getPermission({ permission: slugs[0] as string });
    expect(got.data).toMatchObject({ id: ids[0], slug: slugs[0], name: `name ${slugs[0]}`, description: 'from the SDK' });

    const pages = await allPages(await u.permissions.listPermissions({ limit: 2, search: tag }));
    expect(pages.length).toBe(3);
    expect(pages.flatMap((p) => p.result.data.map((x) => x.id)).sort()).toEqual([...ids].sort());

    const role = await u.permissions.createRole({ name: `${tag}-role`, description: 'sdk role', permissions: slugs.slice(0, 2) });
    expect(role.data.roleId).toMatch(/^role_/);
    const roleGot = await u.permissions.getRole({ role: `${tag}-role` });
    expect(roleGot.data.permissions?.map((p) => p.slug).sort()).toEqual(slugs.slice(0, 2).sort());
    const set = await u.permissions.setRolePermissions({ roleId: role.data.roleId, permissions: [slugs[4] as string] });
    expect(set.data.map((p) => p.slug)).toEqual([slugs[4]]);
    for (let i = 0; i < 2; i++) await u.permissions.createRole({ name: `${tag}-role-${i}` });
    const rolePages = await allPages(await u.permissions.listRoles({ limit: 2, search: tag }));
    expect(rolePages.flatMap((p) => p.result.data.map((r) => r.name)).sort()).toEqual([`${tag}-role`, `${tag}-role-0`, `${tag}-role-1`]);

    expect((await u.permissions.deleteRole({ role: role.data.roleId })).data).toEqual({});
    expect((await u.permissions.deletePermission({ permission: ids[0] as string })).data).toEqual({});
    await expect(u.permissions.getPermission({ permission: ids[0] as string })).rejects.toBeInstanceOf(errors.NotFoundErrorResponse);
  });

  it('a duplicate slug surfaces as the typed ConflictErrorResponse', async () => {
    const u = sdk();
    const slug = `dup${Date.now()}`;
    await u.permissions.createPermission({ name: slug, slug });
    await expect(u.permissions.createPermission({ name: slug, slug })).rejects.toBeInstanceOf(errors.ConflictErrorResponse);
  });
});

describe('@unkey/api identities.* against keyward', () => {
  it('creates, reads, lists (every page), updates and deletes identities', async () => {
    const u = sdk();
    const tag = `sdkid${Date.now()}`;
    const created: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await u.identities.createIdentity({ externalId: `${tag}_${i}`, meta: { i }, ratelimits: [{ name: 'per_user', limit: 10, duration: 60_000, autoApply: true }] });
      expect(res.data.identityId).toMatch(/^id_/);
      created.push(res.data.identityId);
    }
    const got = await u.identities.getIdentity({ identity: `${tag}_0` });
    expect(got.data).toMatchObject({ id: created[0], externalId: `${tag}_0`, meta: { i: 0 } });
    expect(got.data.ratelimits?.[0]).toMatchObject({ name: 'per_user', limit: 10, duration: 60_000, autoApply: true });

    const pages = await allPages(await u.identities.listIdentities({ limit: 2, search: tag }));
    expect(pages.length).toBe(3);
    expect(pages.flatMap((p) => p.result.data.map((x) => x.id)).sort()).toEqual([...created].sort());

    const updated = await u.identities.updateIdentity({ identity: created[1] as string, meta: { plan: 'pro' }, ratelimits: [] });
    expect(updated.data).toMatchObject({ id: created[1], meta: { plan: 'pro' } });
    await u.identities.deleteIdentity({ identity: created[2] as string });
    await expect(u.identities.getIdentity({ identity: created[2] as string })).rejects.toBeInstanceOf(errors.NotFoundErrorResponse);
  });
});
