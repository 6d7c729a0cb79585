// Cluster mode, part 2: a key's credits hold across the nodes. Each node spends from a lease
// PostgreSQL granted it; near exhaustion PostgreSQL decides each spend and recalls the
// leases, so every credit is spent once and none is stranded on a node.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, expectOk, get, startServer, stopAll, type Server } from '../helpers/server.js';
import { eventually, pgValue, startCluster, type TestCluster } from '../helpers/cluster.js';

let cluster: TestCluster;
let apiId: string;

beforeAll(async () => {
  // Leases of a quiet key go back after 5 s here (a minute by default), so the crash test's wait stays short.
  cluster = await startCluster(3, { KEYWARD_CLUSTER_LEASE_QUIET_MS: '5000' });
  apiId = (expectOk(await call(cluster.nodes[0] as Server, 'apis.createApi', { name: 'credits' })) as { apiId: string }).apiId;
});

afterAll(async () => {
  await stopAll();
  cluster?.pg.stop();
});

type Data = Record<string, unknown>;

async function newKey(remaining: number, extra: Data = {}): Promise<{ key: string; keyId: string }> {
  const created = expectOk(await call(cluster.nodes[0] as Server, 'keys.createKey', { apiId, credits: { remaining }, ...extra })) as { key: string; keyId: string };
  for (const n of cluster.nodes) await eventually(async () => (expectOk(await call(n, 'keys.verifyKey', { key: created.key, credits: { cost: 0 } })) as Data).valid === true);
  return created;
}

/** `count` verifications on `node`, `concurrency` at a time: the codes answered (a failed request counts as its error). */
async function verifications(node: Server, key: string, count: number, concurrency: number, stop?: () => boolean): Promise<Map<string, number>> {
  const codes = new Map<string, number>();
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count && !(stop?.() ?? false)) {
      next++;
      let code: string;
      try {
        const res = await call(node, 'keys.verifyKey', { key });
        code = res.status === 200 ? String((res.json as { data: Data }).data.code) : `HTTP ${res.status}`;
      } catch {
        code = 'no answer';
      }
      codes.set(code, (codes.get(code) ?? 0) + 1);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return codes;
}

const remainingOn = async (n: Server, keyId: string): Promise<number | null> => ((expectOk(await call(n, 'keys.getKey', { keyId })) as { credits?: { remaining: number | null } }).credits?.remaining ?? null);

/** Waits until every node has applied the cluster log up to its head as PostgreSQL has it now: a change made through one node has reached them all. */
async function appliedEverywhere(): Promise<void> {
  const head = Number(await pgValue<string>(cluster.pg.url, 'SELECT seq FROM kw_head'));
  const applied = async (n: Server): Promise<number> => Number(/^keyward_cluster_applied_seq (\d+)$/m.exec((await get(n, '/metrics')).text)?.[1] ?? -1);
  for (const n of cluster.nodes) await eventually(async () => (await applied(n)) >= head);
}

describe('credits on three nodes', () => {
  it('3,000 credits and 9,000 verifications spread evenly over the nodes: exactly 3,000 VALID, 0 left everywhere (5 rounds)', async () => {
    for (let round = 1; round <= 5; round++) {
      const { key, keyId } = await newKey(3_000);
      const results = await Promise.all(cluster.nodes.map((n) => verifications(n, key, 3_000, 16)));
      const valid = results.reduce((sum, codes) => sum + (codes.get('VALID') ?? 0), 0);
      const exceeded = results.reduce((sum, codes) => sum + (codes.get('USAGE_EXCEEDED') ?? 0), 0);
      expect({ round, valid, exceeded }).toEqual({ round, valid: 3_000, exceeded: 6_000 });
      for (const n of cluster.nodes) await eventually(async () => (await remainingOn(n, keyId)) === 0);
      expect(Number(await pgValue<string>(cluster.pg.url, `SELECT balance FROM kw_credits WHERE key_id = '${keyId}'::bytea`))).toBe(0);
    }
  }, 120_000);

  it('a node killed with kill -9 mid-run: VALID never passes the credits, and once it is back the balance is the credits less the VALID answered', async () => {
    const { key, keyId } = await newKey(3_000);
    const victim = cluster.nodes[1] as Server;
    let killed = false;
    const answered = new Map<string, number>();
    const count = (codes: Map<string, number>): void => codes.forEach((n, code) => answered.set(code, (answered.get(code) ?? 0) + n));
    // 2,400 verifications (fewer than the credits): the victim is killed after about 300 of its own.
    const others = Promise.all([cluster.nodes[0], cluster.nodes[2]].map((n) => verifications(n as Server, key, 800, 4)));
    const victimRun = verifications(victim, key, 800, 4, () => killed);
    await eventually(async () => Number(await pgValue<string>(cluster.pg.url, `SELECT coalesce(sum(granted - returned), 0) FROM kw_leases WHERE key_id = '${keyId}'::bytea AND node = 'node-1'`)) > 300, 20_000);
    killed = true;
    await victim.stop('SIGKILL');
    (await others).forEach(count);
    count(await victimRun);
    const inFlightAtKill = answered.get('no answer') ?? 0;
    expect(inFlightAtKill).toBeLessThanOrEqual(4);
    // Back with its store and name: it gives back what its lease held.
    const back = await startServer({ rootKey: cluster.rootKey, dataDir: victim.dataDir, env: victim.env });
    cluster.nodes[1] = back;
    const valid = answered.get('VALID') ?? 0;
    expect(valid).toBeLessThanOrEqual(3_000);
    await eventually(async () => Number(await pgValue<string>(cluster.pg.url, `SELECT coalesce(sum(granted - returned), 0) FROM kw_leases WHERE key_id = '${keyId}'::bytea AND granted > settled AND node = 'node-1'`)) === 0, 10_000);
    // The others' leases go back once the key is quiet on them (nothing spent for 5 s).
    await eventually(async () => Number(await pgValue<string>(cluster.pg.url, `SELECT balance FROM kw_credits WHERE key_id = '${keyId}'::bytea`)) + valid + inFlightAtKill >= 3_000, 20_000);
    const balance = Number(await pgValue<string>(cluster.pg.url, `SELECT balance FROM kw_credits WHERE key_id = '${keyId}'::bytea`));
    // Exact, but for verifications that were committed when the node died and never answered.
    expect(balance).toBeLessThanOrEqual(3_000 - valid);
    expect(balance).toBeGreaterThanOrEqual(3_000 - valid - inFlightAtKill);
    // Spending on goes on from there: the rest of the credits, and not one more.
    const rest = await Promise.all(cluster.nodes.map((n) => verifications(n, key, 1_500, 8)));
    const more = rest.reduce((sum, codes) => sum + (codes.get('VALID') ?? 0), 0);
    expect(more).toBe(balance);
  }, 60_000);

  it('the leases of keys gone quiet go back together: each balance is its credits less what was spent', async () => {
    const keys = await Promise.all(Array.from({ length: 12 }, () => newKey(500)));
    const node = cluster.nodes[2] as Server;
    for (const [i, { key }] of keys.entries()) {
      for (let n = 0; n <= i % 3; n++) expect((expectOk(await call(node, 'keys.verifyKey', { key })) as Data).valid).toBe(true);
    }
    const balances = (): Promise<number[]> => Promise.all(keys.map(async ({ keyId }) => Number(await pgValue<string>(cluster.pg.url, `SELECT balance FROM kw_credits WHERE key_id = '${keyId}'::bytea`))));
    // While leased, PostgreSQL's balance is short of what the node holds.
    expect((await balances()).every((b) => b < 499)).toBe(true);
    await eventually(async () => (await balances()).every((b, i) => b === 500 - (1 + (i % 3))), 15_000);
    for (const [i, { keyId }] of keys.entries()) await eventually(async () => (await remainingOn(node, keyId)) === 500 - (1 + (i % 3)));
  }, 30_000);

  it('increment, decrement and set take effect on every node; a set voids the leases of the balance before it', async () => {
    const { key, keyId } = await newKey(100);
    const [a, b, c] = cluster.nodes as [Server, Server, Server];
    // Each node takes a lease.
    for (const n of cluster.nodes) expect((expectOk(await call(n, 'keys.verifyKey', { key })) as Data).valid).toBe(true);
    expectOk(await call(a, 'keys.updateCredits', { keyId, operation: 'increment', value: 50 }));
    expectOk(await call(b, 'keys.updateCredits', { keyId, operation: 'decrement', value: 20 }));
    // 100 − 3 spent + 50 − 20 = 127 in the cluster: spent to the last one across the nodes.
    const spent = await Promise.all(cluster.nodes.map((n) => verifications(n, key, 100, 4)));
    expect(spent.reduce((sum, codes) => sum + (codes.get('VALID') ?? 0), 0)).toBe(127);
    expectOk(await call(c, 'keys.updateCredits', { keyId, operation: 'set', value: 10 }));
    // The set reaches every node. Not checked as "10 remaining on each": a node whose lease ran
    // low asks for the next one at once, and may lease the new balance before the others read
    // it (they then read less until it goes back, after the quiet time). What the set gave is
    // counted below, in VALID answers.
    await appliedEverywhere();
    const after = await Promise.all(cluster.nodes.map((n) => verifications(n, key, 10, 2)));
    expect(after.reduce((sum, codes) => sum + (codes.get('VALID') ?? 0), 0)).toBe(10);
    // A decrement beyond the balance floors at 0 even with leases out.
    expectOk(await call(a, 'keys.updateCredits', { keyId, operation: 'set', value: 40 }));
    // The set reaches the other nodes through the change log: each verifies once it has.
    await appliedEverywhere();
    for (const n of cluster.nodes) expect((expectOk(await call(n, 'keys.verifyKey', { key })) as Data).valid).toBe(true);
    expectOk(await call(b, 'keys.updateCredits', { keyId, operation: 'decrement', value: 1_000 }));
    for (const n of cluster.nodes) await eventually(async () => (await remainingOn(n, keyId)) === 0);
    const none = await Promise.all(cluster.nodes.map((n) => verifications(n, key, 20, 2)));
    expect(none.reduce((sum, codes) => sum + (codes.get('VALID') ?? 0), 0)).toBe(0);
    // Unlimited: every node verifies without credits.
    expectOk(await call(c, 'keys.updateCredits', { keyId, operation: 'set', value: null }));
    for (const n of cluster.nodes) await eventually(async () => (expectOk(await call(n, 'keys.verifyKey', { key })) as Data).valid === true);
  });

  it('PostgreSQL that stops answering (its processes stopped, connections open): a verification that needs a lease is answered within the lease timeout, as KEYWARD_CLUSTER_CREDITS_OFFLINE says, the next ones at once; leases are taken again once it answers', async () => {
    const created = expectOk(await call(cluster.nodes[0] as Server, 'keys.createKey', { apiId, credits: { remaining: 100 } })) as { key: string; keyId: string };
    const node = cluster.nodes[2] as Server;
    // Replicated to the node (read, not verified: the node holds no lease of it).
    await eventually(async () => (await call(node, 'keys.getKey', { keyId: created.keyId })).status === 200);
    cluster.pg.pause(true);
    try {
      for (const withinMs of [3_500, 500]) {
        const started = Date.now();
        const res = await call(node, 'keys.verifyKey', { key: created.key });
        expect((expectOk(res) as Data).code).toBe('USAGE_EXCEEDED');
        expect(Date.now() - started).toBeLessThan(withinMs);
      }
    } finally {
      cluster.pg.pause(false);
    }
    await eventually(async () => (expectOk(await call(node, 'keys.verifyKey', { key: created.key })) as Data).valid === true, 10_000);
  }, 30_000);

  // Last: it stops PostgreSQL.
  it('PostgreSQL away: leases are spent, then `refuse` answers USAGE_EXCEEDED and `allow` lets the allowance through, charged once it is back', async () => {
    const allow = await cluster.node('node-allow', { env: { KEYWARD_CLUSTER_CREDITS_OFFLINE: 'allow', KEYWARD_CLUSTER_CREDITS_OFFLINE_ALLOWANCE: '5' } });
    const { key, keyId } = await newKey(1_000);
    const refuse = cluster.nodes[0] as Server;
    await eventually(async () => (expectOk(await call(allow, 'keys.verifyKey', { key, credits: { cost: 0 } })) as Data).valid === true);
    // Each takes a lease (16: a first one).
    for (const n of [refuse, allow]) expect((expectOk(await call(n, 'keys.verifyKey', { key })) as Data).valid).toBe(true);
    cluster.pg.kill();
    const offline = await Promise.all([refuse, allow].map((n) => verifications(n, key, 40, 1)));
    cluster.pg.start();
    expect(offline.map((codes) => [...codes.keys()].sort())).toEqual([
      ['USAGE_EXCEEDED', 'VALID'],
      ['USAGE_EXCEEDED', 'VALID'],
    ]);
    const [onRefuse, onAllow] = offline.map((codes) => codes.get('VALID') ?? 0) as [number, number];
    expect(onRefuse).toBe(15);
    expect(onAllow).toBe(15 + 5);
    // Back: the allowance is charged, the leases go back; every VALID answered is spent once.
    const valid = 2 + onRefuse + onAllow;
    await eventually(async () => Number(await pgValue<string>(cluster.pg.url, `SELECT balance FROM kw_credits WHERE key_id = '${keyId}'::bytea`)) === 1_000 - valid, 15_000);
    expect(await pgValue<number>(cluster.pg.url, `SELECT count(*)::int FROM kw_charges WHERE key_id = '${keyId}'::bytea`)).toBe(1);
  }, 60_000);
});
