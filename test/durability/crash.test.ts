// DESIGN.md §1, KEYWARD_DURABILITY=process (the default): every state change is committed
// before its response is sent, so a kill -9 at any moment loses no acknowledged credit spend
// and no admitted rate-limit call.
import { cpSync, rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { call, createApi, expectOk, startServer, stopAll, tempDir, type Server } from '../helpers/server.js';
import { ledgerViolations, limitCall, loadThenKill, verification, type Attempt, type Ledger } from './load.js';

afterAll(stopAll);

const INITIAL = 100_000;
const LOOPS = 32;

async function setUp(env: Record<string, string> = {}): Promise<{ server: Server; keyId: string; key: string }> {
  const server = await startServer({ env });
  const apiId = await createApi(server);
  const { key, keyId } = expectOk(await call(server, 'keys.createKey', { apiId, credits: { remaining: INITIAL } })) as { key: string; keyId: string };
  return { server, keyId, key };
}

async function balanceOf(server: Server, keyId: string): Promise<number> {
  return expectOk(await call(server, 'keys.getKey', { keyId })).credits.remaining as number;
}

/** Load until this round has ≥ `minAcks` acknowledgements, then kill -9 mid-stream. */
async function crashRound(server: Server, key: string, ledger: Ledger, minAcks: number): Promise<void> {
  const t = await loadThenKill(verification(server, key), LOOPS, (t) => t.acknowledged >= minAcks, () => server.child.kill('SIGKILL'));
  await server.stop();
  expect(t.refused, 'no refusals while credits remain').toBe(0);
  ledger.acknowledged += t.acknowledged;
  ledger.inflight += t.sent - t.answered;
}

describe('kill -9 under load (durability=process)', () => {
  // Both commit paths: pwrite (the default) and the writable map (KEYWARD_WRITE_MAP=on).
  it.each([
    { path: 'pwrite', rounds: 5, env: {} as Record<string, string> },
    { path: 'writable map', rounds: 2, env: { KEYWARD_WRITE_MAP: 'on' } as Record<string, string> },
  ])('loses no acknowledged credit spend, over $rounds crashes on one data dir ($path)', async ({ rounds, env }) => {
    let { server, keyId, key } = await setUp(env);
    const ledger: Ledger = { initial: INITIAL, acknowledged: 0, inflight: 0 };
    const report: string[] = [];
    for (let round = 0; round < rounds; round++) {
      await crashRound(server, key, ledger, 300 + round * 97);
      server = await startServer({ dataDir: server.dataDir, rootKey: server.rootKey, env });
      const balance = await balanceOf(server, keyId);
      report.push(`round ${round}: balance ${balance}, acknowledged ${ledger.acknowledged}, inflight ${ledger.inflight}`);
      expect(ledgerViolations(ledger, balance), report.join('\n')).toEqual([]);
    }
    // The store still works after the crashes: a verification spends exactly one more.
    const before = await balanceOf(server, keyId);
    expect(expectOk(await call(server, 'keys.verifyKey', { key }))).toMatchObject({ code: 'VALID', credits: before - 1 });
    expect(ledger.acknowledged).toBeGreaterThan(0);
    if (process.env.KEYWARD_TEST_VERBOSE === '1') console.log(report.join('\n'));
  });

  it('loses no admitted ratelimits.limit call over 3 crashes, with other windows changing beside it', async () => {
    let server = await startServer();
    const window = { namespace: 'crash', identifier: 'counted', limit: INITIAL, duration: 2_592_000_000 };
    const peek = async (): Promise<{ remaining: number; reset: number }> => expectOk(await call(server, 'ratelimits.limit', { ...window, cost: 0 })) as { remaining: number; reset: number };
    const { reset } = await peek();
    const ledger: Ledger = { initial: INITIAL, acknowledged: 0, inflight: 0 };
    const report: string[] = [];
    for (let round = 0; round < 3; round++) {
      // Every other request changes one of 500 other windows, so the counted window's records
      // sit among records that are superseded and deleted while the load runs.
      const counted = limitCall(server, window);
      let turn = 0;
      const attempt: Attempt = (agent) =>
        turn++ % 2 === 0 ? counted(agent) : limitCall(server, { ...window, identifier: `other-${turn % 500}` })(agent).then(() => false);
      const t = await loadThenKill(attempt, LOOPS, (t) => t.acknowledged >= 200 + round * 71, () => server.child.kill('SIGKILL'));
      await server.stop();
      ledger.acknowledged += t.acknowledged;
      ledger.inflight += t.sent - t.answered;
      server = await startServer({ dataDir: server.dataDir, rootKey: server.rootKey });
      const now = await peek();
      // The window is 30 days long: its bucket does not end during the test.
      expect(now.reset).toBe(reset);
      report.push(`round ${round}: remaining ${now.remaining}, acknowledged ${ledger.acknowledged}, inflight ${ledger.inflight}`);
      expect(ledgerViolations(ledger, now.remaining), report.join('\n')).toEqual([]);
    }
    expect(ledger.acknowledged).toBeGreaterThan(0);
  });

  it('acknowledged management writes and rate-limit windows survive an immediate kill -9', async () => {
    let { server, keyId, key } = await setUp();
    const apiId = await createApi(server);
    const created = [];
    for (let i = 0; i < 3; i++) created.push(expectOk(await call(server, 'keys.createKey', { apiId, name: `k${i}`, ratelimits: [{ name: 'hour', limit: 2, duration: 3_600_000, autoApply: true }] })) as { key: string; keyId: string });
    expectOk(await call(server, 'keys.updateKey', { keyId, name: 'after-crash', enabled: false }));
    expectOk(await call(server, 'keys.verifyKey', { key: created[0]!.key }));
    const second = expectOk(await call(server, 'keys.verifyKey', { key: created[0]!.key }));
    expect(second.ratelimits[0]).toMatchObject({ remaining: 0, exceeded: false });
    server.child.kill('SIGKILL');
    await server.stop();
    server = await startServer({ dataDir: server.dataDir, rootKey: server.rootKey });
    expect(expectOk(await call(server, 'keys.getKey', { keyId }))).toMatchObject({ name: 'after-crash', enabled: false });
    expect(expectOk(await call(server, 'keys.verifyKey', { key }))).toMatchObject({ code: 'DISABLED', credits: INITIAL });
    for (const [i, c] of created.entries()) expect(expectOk(await call(server, 'keys.getKey', { keyId: c.keyId })).name).toBe(`k${i}`);
    // The two admitted calls of the hourly window were kept (checked when still in the same bucket).
    const d = expectOk(await call(server, 'keys.verifyKey', { key: created[0]!.key }));
    if (d.ratelimits[0].reset === second.ratelimits[0].reset) expect(d.code).toBe('RATE_LIMITED');
  });

  it('the same check catches lost commits (a stale data dir restored after the load): it can fail', async () => {
    let { server, keyId, key } = await setUp();
    // Snapshot the data dir, cleanly closed, before any load.
    await server.stop('SIGTERM');
    const snapshot = tempDir();
    cpSync(server.dataDir, snapshot, { recursive: true });
    server = await startServer({ dataDir: server.dataDir, rootKey: server.rootKey });
    const ledger: Ledger = { initial: INITIAL, acknowledged: 0, inflight: 0 };
    await crashRound(server, key, ledger, 300);
    // "Durability off": every commit since the snapshot is lost.
    rmSync(server.dataDir, { recursive: true, force: true });
    cpSync(snapshot, server.dataDir, { recursive: true });
    server = await startServer({ dataDir: server.dataDir, rootKey: server.rootKey });
    const balance = await balanceOf(server, keyId);
    expect(balance).toBe(INITIAL);
    const violations = ledgerViolations(ledger, balance);
    expect(violations).toHaveLength(1);
    expect(violations[0]).toContain('acknowledged spends were lost');
  });
});
