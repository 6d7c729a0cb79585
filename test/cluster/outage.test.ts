// Cluster mode with PostgreSQL away: verifications, limits and reads go on from each node's
// replica; management writes answer 503 postgres_unavailable and change nothing; once
// PostgreSQL is back the nodes catch up by themselves and writes succeed again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, expectError, expectOk, stopAll, type Server } from '../helpers/server.js';
import { eventually, pgValue, startCluster, type TestCluster } from '../helpers/cluster.js';

let cluster: TestCluster;

beforeAll(async () => {
  cluster = await startCluster(3);
});

afterAll(async () => {
  for (const n of cluster?.nodes ?? []) if (n.child.exitCode !== null || n.child.signalCode !== null) process.stderr.write(`${n.url} exited: ${n.output().stderr}\n`);
  await stopAll();
  cluster?.pg.stop();
});

describe('PostgreSQL stopped and started under verification load', () => {
  it('no verification fails; writes are 503 while it is away and succeed after; the nodes catch up within 5 s', async () => {
    const [a, b, c] = cluster.nodes as [Server, Server, Server];
    const apiId = (expectOk(await call(a, 'apis.createApi', { name: 'outage' })) as { apiId: string }).apiId;
    const keys: string[] = [];
    for (let i = 0; i < 3; i++) keys.push((expectOk(await call(cluster.nodes[i] as Server, 'keys.createKey', { apiId })) as { key: string }).key);
    for (const n of cluster.nodes) for (const key of keys) await eventually(async () => (expectOk(await call(n, 'keys.verifyKey', { key })) as { valid: boolean }).valid);

    let verifying = true;
    const outcomes = { valid: 0, failed: [] as string[] };
    const load = Promise.all(
      cluster.nodes.map(async (n, i) => {
        while (verifying) {
          const res = await call(n, 'keys.verifyKey', { key: keys[i] as string });
          if (res.status === 200 && (res.json as { data: { valid: boolean } }).data.valid) outcomes.valid++;
          else outcomes.failed.push(`${res.status} ${res.text.slice(0, 200)}`);
        }
      }),
    );
    await new Promise((r) => setTimeout(r, 300));
    cluster.pg.kill();
    await new Promise((r) => setTimeout(r, 300));
    // Writes fail cleanly on every node, and change nothing.
    for (const n of cluster.nodes) expectError(await call(n, 'apis.createApi', { name: 'while-away' }), 503, 'postgres_unavailable');
    expectError(await call(b, 'keys.createKey', { apiId }), 503, 'postgres_unavailable');
    // Reads go on.
    expect(expectOk(await call(c, 'apis.getApi', { apiId }))).toMatchObject({ id: apiId });
    await new Promise((r) => setTimeout(r, 700));
    cluster.pg.start();
    const back = Date.now();
    // A write succeeds again on every node, and what one node writes reaches the others.
    for (const n of cluster.nodes) await eventually(async () => (await call(n, 'apis.createApi', { name: 'after' })).status === 200, 5_000);
    const { key } = expectOk(await call(a, 'keys.createKey', { apiId })) as { key: string };
    for (const n of [b, c]) await eventually(async () => (expectOk(await call(n, 'keys.verifyKey', { key })) as { valid: boolean }).valid, 5_000);
    expect(Date.now() - back).toBeLessThan(5_000);
    verifying = false;
    await load;
    expect(outcomes.failed).toEqual([]);
    expect(outcomes.valid).toBeGreaterThan(100);
    const metrics = await (await fetch(`${b.url}/metrics`)).text();
    expect(metrics).toMatch(/^keyward_cluster_postgres_up 1$/m);
  });
});

describe('a node restarted while PostgreSQL is away', () => {
  it('serves from its replica (verifications, reads; writes 503), and catches up once PostgreSQL is back; a node without a replica cannot start', async () => {
    const small = await startCluster(2);
    try {
      const [a, b] = small.nodes as [Server, Server];
      const apiId = (expectOk(await call(a, 'apis.createApi', { name: 'restarted' })) as { apiId: string }).apiId;
      const before = expectOk(await call(a, 'keys.createKey', { apiId })) as { key: string; keyId: string };
      await eventually(async () => (expectOk(await call(b, 'keys.verifyKey', { key: before.key })) as { valid: boolean }).valid);
      await b.stop();
      small.pg.kill();
      const back = await small.node('node-1', { dataDir: b.dataDir });
      expect((expectOk(await call(back, 'keys.verifyKey', { key: before.key })) as { valid: boolean }).valid).toBe(true);
      expectOk(await call(back, 'keys.getKey', { keyId: before.keyId }));
      expectError(await call(back, 'keys.createKey', { apiId }), 503, 'postgres_unavailable');
      expect(back.output().stderr).toContain('serving from this node');
      // An empty data dir has nothing to serve from.
      await expect(small.node('node-new')).rejects.toThrow(/PostgreSQL is unreachable/);
      small.pg.start();
      const after = expectOk(await call(a, 'keys.createKey', { apiId })) as { key: string };
      await eventually(async () => (expectOk(await call(back, 'keys.verifyKey', { key: after.key })) as { valid: boolean }).valid, 10_000);
      expectOk(await call(back, 'keys.createKey', { apiId }));
    } finally {
      small.pg.stop();
    }
  });
});

describe('a node that was down longer than the log reaches', () => {
  it('loads a snapshot when it comes back and serves every key, also the ones made while it was away', async () => {
    const small = await startCluster(2, { KEYWARD_CLUSTER_LOG_KEEP: '5' });
    try {
      const [a, b] = small.nodes as [Server, Server];
      const apiId = (expectOk(await call(a, 'apis.createApi', { name: 'lapsed' })) as { apiId: string }).apiId;
      const before = (expectOk(await call(a, 'keys.createKey', { apiId })) as { key: string }).key;
      await eventually(async () => (expectOk(await call(b, 'keys.verifyKey', { key: before })) as { valid: boolean }).valid);
      await b.stop();
      const made: string[] = [];
      for (let i = 0; i < 10; i++) made.push((expectOk(await call(a, 'keys.createKey', { apiId })) as { key: string }).key);
      const { keyId } = expectOk(await call(a, 'keys.createKey', { apiId })) as { keyId: string };
      expectOk(await call(a, 'keys.deleteKey', { keyId }));
      // The heartbeat (every 2 s) keeps only the last 5 changes.
      await eventually(async () => ((await pgValue<number>(small.pg.url, 'SELECT min(seq)::int FROM kw_changes')) ?? 0) > 20, 6_000);
      const back = await small.node('node-1', { dataDir: b.dataDir });
      for (const key of [before, ...made]) expect((expectOk(await call(back, 'keys.verifyKey', { key })) as { valid: boolean }).valid).toBe(true);
      expectError(await call(back, 'keys.getKey', { keyId }), 404, 'key_not_found');
      expect(back.output().stderr).toMatch(/starting over from a snapshot/);
    } finally {
      small.pg.stop();
    }
  });
});

describe('a serving node that loads a snapshot', () => {
  it('keeps answering for every key the cluster has while it resyncs, and drops what the cluster no longer has', async () => {
    const small = await startCluster(2, { KEYWARD_CLUSTER_LOG_KEEP: '3' });
    try {
      const [a, b] = small.nodes as [Server, Server];
      const apiId = (expectOk(await call(a, 'apis.createApi', { name: 'resync' })) as { apiId: string }).apiId;
      const kept = (expectOk(await call(a, 'keys.createKey', { apiId })) as { key: string }).key;
      const gone = expectOk(await call(a, 'keys.createKey', { apiId })) as { key: string; keyId: string };
      for (const key of [kept, gone.key]) await eventually(async () => (expectOk(await call(b, 'keys.verifyKey', { key })) as { valid: boolean }).valid);
      // b stops hearing from PostgreSQL's log for a while: its LISTEN and polls fail while the
      // server is paused, then the log no longer reaches back to its place.
      b.child.kill('SIGSTOP');
      expectOk(await call(a, 'keys.deleteKey', { keyId: gone.keyId }));
      for (let i = 0; i < 8; i++) expectOk(await call(a, 'keys.createKey', { apiId }));
      await eventually(async () => ((await pgValue<number>(small.pg.url, 'SELECT min(seq)::int FROM kw_changes')) ?? 0) > 12, 6_000);
      b.child.kill('SIGCONT');
      // While it resyncs, the key the cluster still has keeps verifying.
      const until = Date.now() + 3_000;
      let sawGone = false;
      while (Date.now() < until) {
        expect((expectOk(await call(b, 'keys.verifyKey', { key: kept })) as { valid: boolean }).valid).toBe(true);
        if ((expectOk(await call(b, 'keys.verifyKey', { key: gone.key })) as { code: string }).code === 'NOT_FOUND') sawGone = true;
      }
      expect(sawGone).toBe(true);
      expect(b.output().stderr).toMatch(/starting over from a snapshot/);
    } finally {
      small.pg.stop();
    }
  });
});
