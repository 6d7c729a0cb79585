// From one node to many: a single node's store (keys, permissions, roles, identities,
// overrides, credits) loaded into an empty cluster with `keyward cluster seed` answers the
// same on every node of it; the CLI works on the cluster.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPostgres, type ThrowawayPostgres } from '../../bench/lib/postgres.js';
import { call, cli, expectError, expectOk, randomRootKey, startServer, stopAll, tempDir, type Server } from '../helpers/server.js';

let pg: ThrowawayPostgres;
const rootKey = randomRootKey();
type Data = Record<string, unknown>;

beforeAll(async () => {
  pg = await startPostgres();
});

afterAll(async () => {
  await stopAll();
  pg?.stop();
});

/** What a node answers about the seeded data: the verifications and the reads compared across nodes. */
async function answers(n: Server, s: { keys: string[]; keyIds: string[]; namespace: string }): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const key of s.keys) {
    const v = expectOk(await call(n, 'keys.verifyKey', { key, credits: { cost: 0 }, permissions: 'docs.read' })) as Data;
    out.push({ ...v, ratelimits: undefined });
  }
  for (const keyId of s.keyIds) out.push(expectOk(await call(n, 'keys.getKey', { keyId })));
  out.push(expectOk(await call(n, 'permissions.listPermissions', {})));
  out.push(expectOk(await call(n, 'permissions.listRoles', {})));
  out.push(expectOk(await call(n, 'identities.listIdentities', {})));
  out.push(expectOk(await call(n, 'ratelimits.getOverride', { namespace: s.namespace, identifier: 'vip_1' })));
  return out;
}

describe('keyward cluster seed', () => {
  it('loads a single-node store into an empty cluster; every node answers as the single node did', async () => {
    const single = await startServer({ rootKey });
    const apiId = (expectOk(await call(single, 'apis.createApi', { name: 'seeded' })) as { apiId: string }).apiId;
    expectOk(await call(single, 'permissions.createRole', { name: 'reader', permissions: ['docs.read'] }));
    const keys: string[] = [];
    const keyIds: string[] = [];
    for (let i = 0; i < 5; i++) {
      const k = expectOk(await call(single, 'keys.createKey', { apiId, roles: ['reader'], externalId: `user_${i}`, credits: { remaining: 100 + i }, ratelimits: [{ name: 'rps', limit: 10, duration: 60_000, autoApply: true }] })) as { key: string; keyId: string };
      keys.push(k.key);
      keyIds.push(k.keyId);
    }
    const namespace = 'seeded-ns';
    expectOk(await call(single, 'ratelimits.limit', { namespace, identifier: 'x', limit: 1, duration: 60_000, cost: 0 }));
    expectOk(await call(single, 'ratelimits.setOverride', { namespace, identifier: 'vip_*', limit: 500, duration: 60_000 }));
    const expected = await answers(single, { keys, keyIds, namespace });
    await single.stop();

    const seeded = await cli(['cluster', 'seed'], single.dataDir, { KEYWARD_POSTGRES_URL: pg.url });
    expect(seeded.code, seeded.stderr).toBe(0);
    expect((seeded.json as { records: number }).records).toBeGreaterThan(20);
    // A second seed is refused: the cluster is not empty any more.
    const again = await cli(['cluster', 'seed'], single.dataDir, { KEYWARD_POSTGRES_URL: pg.url });
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/not empty/);

    const nodes = await Promise.all([0, 1, 2].map((i) => startServer({ rootKey, env: { KEYWARD_POSTGRES_URL: pg.url, KEYWARD_NODE_ID: `seeded-${i}` } })));
    for (const n of nodes) expect(await answers(n, { keys, keyIds, namespace })).toEqual(expected);
    // A node whose data dir is a single node's store is refused, with what to do instead.
    const refused = await startServer({ rootKey, dataDir: single.dataDir, env: { KEYWARD_POSTGRES_URL: pg.url } }).then(
      () => 'started',
      (err: Error) => err.message,
    );
    expect(refused).toMatch(/single-node keyward's store/);

    // The CLI works on the cluster: a root key made with it works on every node.
    const created = await cli(['root-keys', 'create', '--workspace', (await cli(['root-keys', 'list'], tempDir(), { KEYWARD_POSTGRES_URL: pg.url })).json[0].workspaceId, '--permission', 'apis.*.read_api'], tempDir(), { KEYWARD_POSTGRES_URL: pg.url });
    expect(created.code, created.stderr).toBe(0);
    for (const n of nodes) expectOk(await call(n, 'apis.getApi', { apiId }, { rootKey: created.json.key }));
    for (const n of nodes) expectError(await call(n, 'apis.createApi', { name: 'not-allowed' }, { rootKey: created.json.key }), 403, 'insufficient_permissions');
  });
});
