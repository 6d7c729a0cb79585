// DESIGN.md §1, KEYWARD_DURABILITY=disk: replies that changed state wait for an fsync (group
// commit). Everything still answers correctly, and a kill -9 loses no acknowledged write.
import { afterAll, describe, expect, it } from 'vitest';
import { call, createApi, expectOk, get, startServer, stopAll, type Server } from '../helpers/server.js';
import { ledgerViolations, loadThenKill, verification } from './load.js';

afterAll(stopAll);

const DISK = { KEYWARD_DURABILITY: 'disk' };

function restart(server: Server, env: Record<string, string> = DISK): Promise<Server> {
  return startServer({ dataDir: server.dataDir, rootKey: server.rootKey, env });
}

describe('durability=disk', () => {
  it('verifications and management writes answer correctly, and survive kill -9 once acknowledged', async () => {
    let server = await startServer({ env: DISK });
    expect(server.output().stdout).toContain('durability=disk');
    // disk mode commits through pwrite unless KEYWARD_WRITE_MAP=on (docs/durability.md, Commit paths: twice as fast here).
    expect((await get(server, '/metrics')).text).toContain('keyward_store_write_map 0');
    const apiId = await createApi(server);
    const { key, keyId } = expectOk(await call(server, 'keys.createKey', { apiId, credits: { remaining: 50 } })) as { key: string; keyId: string };
    const seen: number[] = [];
    for (let i = 0; i < 10; i++) seen.push(expectOk(await call(server, 'keys.verifyKey', { key })).credits as number);
    expect(seen).toEqual([49, 48, 47, 46, 45, 44, 43, 42, 41, 40]);
    // Concurrent verifications in one group commit still each see their own balance.
    const burst = await Promise.all(Array.from({ length: 20 }, () => call(server, 'keys.verifyKey', { key })));
    expect(burst.map((r) => expectOk(r).credits as number).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => 20 + i));
    const others = [];
    for (let i = 0; i < 5; i++) {
      others.push(expectOk(await call(server, 'keys.createKey', { apiId, name: `disk-${i}`, credits: { remaining: 7 } })) as { key: string; keyId: string });
    }
    expectOk(await call(server, 'keys.updateKey', { keyId, name: 'renamed', meta: { v: 2 } }));
    expectOk(await call(server, 'keys.updateCredits', { keyId: others[0]!.keyId, operation: 'set', value: 1234 }));
    expectOk(await call(server, 'keys.deleteKey', { keyId: others[1]!.keyId }));
    const last = expectOk(await call(server, 'keys.verifyKey', { key: others[2]!.key }));
    expect(last).toMatchObject({ code: 'VALID', credits: 6 });

    server.child.kill('SIGKILL');
    await server.stop();
    server = await restart(server);

    const k = expectOk(await call(server, 'keys.getKey', { keyId }));
    expect(k).toMatchObject({ name: 'renamed', meta: { v: 2 }, credits: { remaining: 20 } });
    expect(expectOk(await call(server, 'keys.getKey', { keyId: others[0]!.keyId })).credits.remaining).toBe(1234);
    expect((await call(server, 'keys.getKey', { keyId: others[1]!.keyId })).status).toBe(404);
    expect(expectOk(await call(server, 'keys.verifyKey', { key: others[1]!.key }))).toEqual({ valid: false, code: 'NOT_FOUND' });
    expect(expectOk(await call(server, 'keys.getKey', { keyId: others[2]!.keyId })).credits.remaining).toBe(6);
    for (const o of others.slice(3)) expect(expectOk(await call(server, 'keys.verifyKey', { key: o.key }))).toMatchObject({ code: 'VALID', credits: 6 });
  });

  it('kill -9 mid-stream under load (two serving threads) loses no acknowledged spend, on either commit path', async () => {
    await killMidStream({ ...DISK, KEYWARD_THREADS: '2' });
    await killMidStream({ ...DISK, KEYWARD_WRITE_MAP: 'on' });
  });
});

/** Spends credits under load from 32 clients, kill -9 mid-stream, restarts, checks the ledger. */
async function killMidStream(env: Record<string, string>): Promise<void> {
  let server = await startServer({ env });
  expect((await get(server, '/metrics')).text).toContain(`keyward_store_write_map ${env.KEYWARD_WRITE_MAP === 'on' ? 1 : 0}`);
  const apiId = await createApi(server);
  const initial = 100_000;
  const { key, keyId } = expectOk(await call(server, 'keys.createKey', { apiId, credits: { remaining: initial } })) as { key: string; keyId: string };
  const t = await loadThenKill(verification(server, key), 32, (t) => t.acknowledged >= 300, () => server.child.kill('SIGKILL'));
  await server.stop();
  expect(t.refused).toBe(0);
  server = await restart(server, env);
  const balance = expectOk(await call(server, 'keys.getKey', { keyId })).credits.remaining as number;
  expect(ledgerViolations({ initial, acknowledged: t.acknowledged, inflight: t.sent - t.answered }, balance)).toEqual([]);
}
