// Cluster mode, part 1 (KEYWARD_POSTGRES_URL): three nodes on one PostgreSQL share one key
// space; each keeps a replica fed from the change log, and answers verifications from it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, expectError, expectOk, stopAll, tempDir, type Server } from '../helpers/server.js';
import { eventually, pgValue, startCluster, type TestCluster } from '../helpers/cluster.js';

let cluster: TestCluster;
let a: Server, b: Server, c: Server;

beforeAll(async () => {
  // All three start at once: one of them bootstraps the cluster.
  cluster = await startCluster(3);
  [a, b, c] = cluster.nodes as [Server, Server, Server];
});

afterAll(async () => {
  await stopAll();
  cluster?.pg.stop();
});

type Data = Record<string, unknown>;
const verify = async (n: Server, key: string, extra: Data = {}): Promise<Data> => expectOk(await call(n, 'keys.verifyKey', { key, ...extra })) as Data;

describe('three nodes on one PostgreSQL', () => {
  it('bootstrapping three nodes at once made one workspace and one root key, which works on every node', async () => {
    expect(await pgValue<number>(cluster.pg.url, 'SELECT count(*)::int FROM kw_records WHERE tbl = 1')).toBe(1);
    expect(await pgValue<number>(cluster.pg.url, 'SELECT count(*)::int FROM kw_records WHERE tbl = 2')).toBe(1);
    for (const n of cluster.nodes) expectOk(await call(n, 'apis.createApi', { name: 'boot' }));
  });

  it('a key created on one node verifies on the others; its update, disable and delete are seen everywhere', async () => {
    const apiId = (expectOk(await call(a, 'apis.createApi', { name: 'repl' })) as { apiId: string }).apiId;
    const { key, keyId } = expectOk(await call(a, 'keys.createKey', { apiId, name: 'one', meta: { plan: 'pro' } })) as { key: string; keyId: string };
    for (const n of [b, c]) await eventually(async () => (await verify(n, key)).valid === true);
    expectOk(await call(b, 'keys.updateKey', { keyId, name: 'two', meta: { plan: 'team' } }));
    for (const n of [a, c]) await eventually(async () => (await verify(n, key)).name === 'two');
    expect((await verify(a, key)).meta).toEqual({ plan: 'team' });
    expectOk(await call(c, 'keys.updateKey', { keyId, enabled: false }));
    for (const n of [a, b]) await eventually(async () => (await verify(n, key)).code === 'DISABLED');
    expectOk(await call(a, 'keys.deleteKey', { keyId }));
    for (const n of cluster.nodes) await eventually(async () => (await verify(n, key)).code === 'NOT_FOUND');
  });

  it('reroll, roles and permissions made on one node are seen on the others', async () => {
    const apiId = (expectOk(await call(a, 'apis.createApi', { name: 'rbac' })) as { apiId: string }).apiId;
    const { key, keyId } = expectOk(await call(b, 'keys.createKey', { apiId })) as { key: string; keyId: string };
    const role = `role_${Date.now()}`;
    expectOk(await call(c, 'permissions.createRole', { name: role, permissions: ['docs.read'] }));
    expectOk(await call(a, 'keys.addRoles', { keyId, roles: [role] }));
    expectOk(await call(b, 'keys.addPermissions', { keyId, permissions: ['docs.write'] }));
    for (const n of cluster.nodes) await eventually(async () => (await verify(n, key, { permissions: 'docs.read AND docs.write' })).valid === true);
    expectOk(await call(c, 'permissions.deletePermission', { permission: 'docs.write' }));
    for (const n of cluster.nodes) await eventually(async () => (await verify(n, key, { permissions: 'docs.write' })).code === 'INSUFFICIENT_PERMISSIONS');
    const rerolled = expectOk(await call(c, 'keys.rerollKey', { keyId, expiration: 0 })) as { key: string };
    for (const n of cluster.nodes) {
      await eventually(async () => (await verify(n, rerolled.key, { permissions: 'docs.read' })).valid === true);
      await eventually(async () => (await verify(n, key)).code === 'EXPIRED');
    }
  });

  it('a write is visible at once on the node that answered it (read-your-writes)', async () => {
    for (const n of cluster.nodes) {
      const apiId = (expectOk(await call(n, 'apis.createApi', { name: 'ryw' })) as { apiId: string }).apiId;
      const { keyId } = expectOk(await call(n, 'keys.createKey', { apiId, name: 'first' })) as { keyId: string };
      expect((expectOk(await call(n, 'keys.getKey', { keyId })) as { name: string }).name).toBe('first');
      expectOk(await call(n, 'keys.updateKey', { keyId, name: 'second' }));
      expect((expectOk(await call(n, 'keys.getKey', { keyId })) as { name: string }).name).toBe('second');
    }
  });

  it('20 concurrent createPermission calls with one slug over 3 nodes: one 200, 19 × 409', async () => {
    const slug = `race.${Date.now()}`;
    const replies = await Promise.all(Array.from({ length: 20 }, (_, i) => call(cluster.nodes[i % 3] as Server, 'permissions.createPermission', { name: slug, slug })));
    expect(replies.filter((r) => r.status === 200)).toHaveLength(1);
    for (const r of replies.filter((x) => x.status !== 200)) expectError(r, 409, 'permission_already_exists');
  });

  it('concurrent creates of one role name and one identity externalId: one wins each', async () => {
    const name = `r_${Date.now()}`;
    const roles = await Promise.all(Array.from({ length: 9 }, (_, i) => call(cluster.nodes[i % 3] as Server, 'permissions.createRole', { name })));
    expect(roles.filter((r) => r.status === 200)).toHaveLength(1);
    for (const r of roles.filter((x) => x.status !== 200)) expectError(r, 409, 'role_already_exists');
    const externalId = `user_${Date.now()}`;
    const ids = await Promise.all(Array.from({ length: 9 }, (_, i) => call(cluster.nodes[i % 3] as Server, 'identities.createIdentity', { externalId })));
    expect(ids.filter((r) => r.status === 200)).toHaveLength(1);
    for (const r of ids.filter((x) => x.status !== 200)) expectError(r, 409, 'identity_already_exists');
  });

  it('concurrent updates of one key from three nodes all land, none lost (each worked out on the latest record)', async () => {
    const apiId = (expectOk(await call(a, 'apis.createApi', { name: 'updates' })) as { apiId: string }).apiId;
    const { keyId } = expectOk(await call(a, 'keys.createKey', { apiId })) as { keyId: string };
    const replies = await Promise.all(Array.from({ length: 12 }, (_, i) => call(cluster.nodes[i % 3] as Server, 'keys.addPermissions', { keyId, permissions: [`p.${i}`] })));
    for (const r of replies) expectOk(r);
    for (const n of cluster.nodes) {
      await eventually(async () => ((expectOk(await call(n, 'keys.getKey', { keyId })) as { permissions?: string[] }).permissions ?? []).length === 12);
    }
  });

  it('a write on another node right after a create finds what was created (it catches up with PostgreSQL instead of a 404)', async () => {
    const apiId = (expectOk(await call(a, 'apis.createApi', { name: 'right-after' })) as { apiId: string }).apiId;
    for (let i = 0; i < 3; i++) {
      // The nodes lose their LISTEN connections: until their next poll (≤ 1 s) nothing tells
      // b and c that the log moved on, so their replicas stay behind the create below.
      await pgValue(cluster.pg.url, "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = 'keyward-listen'");
      const { keyId } = expectOk(await call(a, 'keys.createKey', { apiId })) as { keyId: string };
      expectOk(await call(b, 'keys.updateKey', { keyId, name: `b${i}` }));
      expectOk(await call(c, 'keys.addPermissions', { keyId, permissions: [`after.${i}`] }));
      // Reads too: a 404 from a replica that is behind is looked at again after a catch-up.
      await pgValue(cluster.pg.url, "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = 'keyward-listen'");
      const other = expectOk(await call(a, 'keys.createKey', { apiId })) as { keyId: string };
      expect((expectOk(await call(b, 'keys.getKey', { keyId: other.keyId })) as { keyId: string }).keyId).toBe(other.keyId);
    }
    // Something missing everywhere is still a 404, after the catch-up.
    expectError(await call(b, 'keys.updateKey', { keyId: 'key_doesNotExist000000000', name: 'x' }), 404, 'key_not_found');
    expectError(await call(c, 'keys.getKey', { keyId: 'key_doesNotExist000000000' }), 404, 'key_not_found');
  });

  it('a write on another node right after a delete works from what is left: no key in a deleted API, no deleted role or identity taken, no 409 for a name freed', async () => {
    const stale = (): Promise<unknown> => pgValue(cluster.pg.url, "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = 'keyward-listen'");
    const home = (expectOk(await call(a, 'apis.createApi', { name: 'after-delete-home' })) as { apiId: string }).apiId;
    for (let i = 0; i < 3; i++) {
      const apiId = (expectOk(await call(a, 'apis.createApi', { name: `after-delete-${i}` })) as { apiId: string }).apiId;
      const role = `after-delete-role-${i}-${Date.now()}`;
      const roleId = (expectOk(await call(a, 'permissions.createRole', { name: role })) as { roleId: string }).roleId;
      const externalId = `after-delete-${i}-${Date.now()}`;
      const identityId = (expectOk(await call(a, 'identities.createIdentity', { externalId })) as { identityId: string }).identityId;
      // b has them all, then stops hearing of changes until its next poll (≤ 1 s).
      await eventually(async () => (await call(b, 'identities.getIdentity', { identity: externalId })).status === 200);
      await stale();
      expectOk(await call(a, 'apis.deleteApi', { apiId }));
      expectOk(await call(a, 'permissions.deleteRole', { role: roleId }));
      expectOk(await call(a, 'identities.deleteIdentity', { identity: externalId }));
      expectError(await call(b, 'keys.createKey', { apiId }), 404, 'api_not_found');
      expectError(await call(b, 'keys.createKey', { apiId: home, roles: [role] }), 404, 'role_not_found');
      expectOk(await call(b, 'permissions.createRole', { name: role }));
      const { keyId } = expectOk(await call(b, 'keys.createKey', { apiId: home, externalId })) as { keyId: string };
      // The key's identity is a new one, which every node has.
      const linked = (expectOk(await call(b, 'keys.getKey', { keyId })) as { identity?: { id: string; externalId: string } }).identity;
      expect(linked?.externalId).toBe(externalId);
      expect(linked?.id).not.toBe(identityId);
      expect((expectOk(await call(a, 'identities.getIdentity', { identity: externalId })) as { id: string }).id).toBe(linked?.id);
    }
  });

  it('a permission deleted on one node while another gives it to a role, at the same moment: the key verifies with it exactly when it exists', async () => {
    const apiId = (expectOk(await call(a, 'apis.createApi', { name: 'perm-race' })) as { apiId: string }).apiId;
    for (let i = 0; i < 20; i++) {
      const slug = `race.p${i}.${Date.now()}`;
      expectOk(await call(a, 'permissions.createPermission', { name: slug, slug }));
      const name = `race-role-${i}-${Date.now()}`;
      const { roleId } = expectOk(await call(a, 'permissions.createRole', { name })) as { roleId: string };
      const { key } = expectOk(await call(a, 'keys.createKey', { apiId, roles: [name] })) as { key: string };
      await eventually(async () => (await call(b, 'permissions.getRole', { role: roleId })).status === 200);
      const [deleted, given] = await Promise.all([call(a, 'permissions.deletePermission', { permission: slug }), call(b, 'permissions.setRolePermissions', { roleId, permissions: [slug] })]);
      expect([deleted.status, given.status], `${deleted.text} ${given.text}`).toEqual([200, 200]);
      // Either order is a serial one: given first, the deletion takes it from the role; deleted first, giving it creates it again.
      const exists = (await call(a, 'permissions.getPermission', { permission: slug })).status === 200;
      await eventually(async () => (await verify(c, key, { permissions: slug })).code === (exists ? 'VALID' : 'INSUFFICIENT_PERMISSIONS'), 3_000);
    }
  }, 60_000);

  it('a node started with an empty data dir loads the cluster and serves every key', async () => {
    const apiId = (expectOk(await call(a, 'apis.createApi', { name: 'fresh' })) as { apiId: string }).apiId;
    const keys = await Promise.all(Array.from({ length: 20 }, () => call(b, 'keys.createKey', { apiId }).then((r) => (expectOk(r) as { key: string }).key)));
    const fresh = await cluster.node('node-fresh', { dataDir: tempDir() });
    for (const key of keys) expect((await verify(fresh, key)).valid).toBe(true);
    // And it follows the log from there.
    const { key } = expectOk(await call(a, 'keys.createKey', { apiId })) as { key: string };
    await eventually(async () => (await verify(fresh, key)).valid === true);
  });

  it('/metrics shows the replica and PostgreSQL', async () => {
    const res = await fetch(`${a.url}/metrics`);
    const text = await res.text();
    expect(text).toMatch(/^keyward_cluster_postgres_up 1$/m);
    expect(text).toMatch(/^keyward_cluster_applied_seq \d+$/m);
    expect(text).toMatch(/^keyward_cluster_lag_seconds 0$/m);
  });
});
