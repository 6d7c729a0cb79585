// DESIGN.md §1: "disk full and other storage failures give a clear 5xx error for that
// request, and the server keeps serving reads". The data dir sits on a small tmpfs; keys
// with large metadata are created until the disk is full. The server must answer 507
// insufficient_storage naming the data dir and its free space (never die: with the writable map, a write to a page without disk
// blocks would be SIGBUS, which is why the map's space is reserved up front), keep every
// acknowledged key, keep verifying, and write again once the disk has room (the tmpfs is
// grown). Both commit paths (KEYWARD_WRITE_MAP on / off).
// Mounting needs root; elsewhere the test is skipped and says so.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { inProcessServer } from '../helpers/inProcess.js';
import { bootstrapWorkspace, call, cli, createApi, expectOk, get, startServer, stopAll } from '../helpers/server.js';

const mounts: string[] = [];

function mountTmpfs(bytes: number): string | undefined {
  const dir = mkdtempSync(join(tmpdir(), 'keyward-diskfull-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${bytes}`, 'tmpfs', dir], { stdio: 'ignore' });
  } catch {
    rmSync(dir, { recursive: true, force: true });
    return undefined;
  }
  mounts.push(dir);
  return dir;
}

afterAll(async () => {
  await stopAll();
  for (const dir of mounts) {
    execFileSync('umount', ['-l', dir], { stdio: 'ignore' });
    rmSync(dir, { recursive: true, force: true });
  }
});

const canMount = (() => {
  const probe = mountTmpfs(1 << 20);
  return probe !== undefined;
})();

const META = { blob: 'x'.repeat(9_000) };

// The in-process server of the one-turn test below, on a tmpfs of its own.
const srv = inProcessServer({ dataDir: canMount ? mountTmpfs(3 << 20) : undefined, env: { KEYWARD_MAP_BYTES: String(1 << 20) } });

describe.skipIf(!canMount)('disk full (needs root to mount a small tmpfs)', () => {
  for (const writeMap of ['on', 'off'] as const) {
    it(`answers 507 insufficient_storage, keeps serving reads, loses nothing and writes again once there is room (KEYWARD_WRITE_MAP=${writeMap})`, async () => {
      const dataDir = mountTmpfs(3 << 20) as string;
      const server = await startServer({ dataDir, env: { KEYWARD_MAP_BYTES: String(1 << 20), KEYWARD_WRITE_MAP: writeMap } });
      expect((await get(server, '/metrics')).text).toContain(`keyward_store_write_map ${writeMap === 'on' ? 1 : 0}`);
      const apiId = await createApi(server);
      const created: { key: string; keyId: string }[] = [];
      let refused;
      for (let i = 0; i < 2_000 && refused === undefined; i++) {
        const r = await call(server, 'keys.createKey', { apiId, meta: META, credits: { remaining: 10 } });
        if (r.status === 200) created.push(r.json.data as { key: string; keyId: string });
        else refused = r;
      }
      expect(refused?.status, refused?.text).toBe(507);
      expect(refused?.json.error.type).toMatch(/\/storage\/insufficient_storage$/);
      expect(refused?.json.error.detail).toContain(`data dir ${dataDir} is full`);
      expect(refused?.json.error.detail).toMatch(/\(\d+ bytes free\)/);
      expect((await get(server, '/metrics')).text).toMatch(/\nkeyward_data_dir_free_bytes \d+\n/);
      expect(created.length).toBeGreaterThan(10);
      expect(server.child.exitCode).toBeNull();
      expect(server.child.signalCode).toBeNull();

      // Reads keep working, and every acknowledged key is there.
      expect((await get(server, '/v2/liveness')).status).toBe(200);
      for (const k of [created[0], created[created.length - 1]]) {
        expect(expectOk(await call(server, 'keys.getKey', { keyId: k!.keyId }))).toMatchObject({ keyId: k!.keyId, meta: META });
      }
      const list = expectOk(await call(server, 'apis.listKeys', { apiId, limit: 100 })) as unknown[];
      expect(list.length).toBe(Math.min(100, created.length));
      // A verification that needs no new page still commits; either way it answers cleanly.
      const v = await call(server, 'keys.verifyKey', { key: created[0]!.key });
      expect([200, 507]).toContain(v.status);
      if (v.status === 200) expect(v.json.data).toMatchObject({ valid: true, credits: 9 });
      expect(server.child.exitCode).toBeNull();

      // Room again: writes resume, and what was there stays.
      execFileSync('mount', ['-o', 'remount,size=16m', dataDir], { stdio: 'ignore' });
      const after = expectOk(await call(server, 'keys.createKey', { apiId, meta: META, credits: { remaining: 10 } })) as { key: string };
      expect(expectOk(await call(server, 'keys.verifyKey', { key: after.key }))).toMatchObject({ valid: true, credits: 9 });
      expect(expectOk(await call(server, 'keys.getKey', { keyId: created[created.length - 1]!.keyId }))).toMatchObject({ meta: META });
      await server.stop();
    }, 60_000);
  }

  // Group commit (durability.md): the writes of a turn share one commit. When it fails, the
  // replies of the writes fail, and so do those of reads that saw what the writes changed;
  // a read of nothing they changed is answered as it would have been without them.
  it('a read in the turn of a write the full disk refuses: answered unless it read what that write changed', async () => {
    const apiId = await createApi(srv());
    const plain = expectOk(await call(srv(), 'keys.createKey', { apiId })) as { key: string; keyId: string };
    const paid = expectOk(await call(srv(), 'keys.createKey', { apiId, credits: { remaining: 10 } })) as { key: string; keyId: string };
    const limit = (identifier: string) => call(srv(), 'ratelimits.limit', { namespace: 'turn', identifier, limit: 1, duration: 600_000 });
    expect(expectOk(await limit('spent'))).toMatchObject({ success: true });
    let status = 200;
    for (let i = 0; i < 2_000 && status === 200; i++) status = (await call(srv(), 'keys.createKey', { apiId, meta: META })).status;
    expect(status).toBe(507);
    const keysBefore = (expectOk(await call(srv(), 'apis.listKeys', { apiId, limit: 100 })) as unknown[]).length;

    // One turn (each call is dispatched before the first reply settles).
    const turn = await Promise.all([
      call(srv(), 'keys.createKey', { apiId, meta: META }),
      call(srv(), 'keys.verifyKey', { key: paid.key }),
      limit('fresh'),
      call(srv(), 'keys.verifyKey', { key: plain.key }),
      call(srv(), 'keys.getKey', { keyId: plain.keyId }),
      call(srv(), 'keys.verifyKey', { key: 'sk_not_a_key_of_this_store' }),
      limit('spent'),
      call(srv(), 'keys.getKey', { keyId: paid.keyId }),
      call(srv(), 'apis.listKeys', { apiId, limit: 100 }),
      limit('fresh'),
    ]);
    const [created, spend, counted, verified, read, unknown, refused, paidRead, listed, countedAgain] = turn;
    // The writes: the commit failed.
    for (const write of [created, spend, counted]) expect(write?.status, write?.text).toBe(507);
    // Reads of nothing the writes changed: a verification without credits or limits, a key,
    // a key that does not exist, a limit refused on a window counted in an earlier turn.
    expect(expectOk(verified!)).toMatchObject({ valid: true, code: 'VALID' });
    expect(expectOk(read!)).toMatchObject({ keyId: plain.keyId });
    expect(expectOk(unknown!)).toMatchObject({ valid: false, code: 'NOT_FOUND' });
    expect(expectOk(refused!)).toMatchObject({ success: false, remaining: 0 });
    // Reads of what they changed: the balance spent, the keys of the API, the window counted.
    for (const dependent of [paidRead, listed, countedAgain]) expect(dependent?.status, dependent?.text).toBe(507);

    // Nothing of the turn was applied.
    expect(expectOk(await call(srv(), 'keys.getKey', { keyId: paid.keyId }))).toMatchObject({ credits: { remaining: 10 } });
    expect((expectOk(await call(srv(), 'apis.listKeys', { apiId, limit: 100 })) as unknown[]).length).toBe(keysBefore);
  }, 60_000);

  // The server adopts a map grown by another process (the CLI, with a larger
  // KEYWARD_MAP_BYTES). With the writable map, that larger map's disk blocks cannot be
  // reserved on a nearly full disk: writes must then be refused cleanly (507) rather than
  // go through pages without blocks, which ended in a SIGBUS once the disk filled.
  it('a map grown by the CLI beyond what the disk can reserve: 507s, never a crash', async () => {
    const dataDir = mountTmpfs(3 << 20) as string;
    const server = await startServer({ dataDir, env: { KEYWARD_MAP_BYTES: String(1 << 20) } });
    const apiId = await createApi(server);
    // The CLI grows the map (its own KEYWARD_MAP_BYTES) and fills most of the disk: a root
    // key of 12,000 permissions is a record of about 1.2 MB.
    const ws = await bootstrapWorkspace(dataDir);
    const grants = Array.from({ length: 12_000 }, (_, i) => ['--permission', `apis.api_${String(i).padStart(6, '0')}${'a'.repeat(80)}.verify_key`]).flat();
    expect((await cli(['root-keys', 'create', '--workspace', ws, ...grants], dataDir, { KEYWARD_MAP_BYTES: String(64 << 20) })).code).toBe(0);
    const statuses = new Map<number, number>();
    for (let i = 0; i < 1_500 && !(statuses.get(507)! > 20); i++) {
      const r = await call(server, 'keys.createKey', { apiId, meta: { blob: 'x'.repeat(3_000) } });
      statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
      if (r.status !== 200) expect(r.json.error.type, r.text).toMatch(/\/storage\/insufficient_storage$/);
    }
    expect(statuses.get(507)).toBeGreaterThan(0);
    expect([...statuses.keys()].filter((status) => status !== 200 && status !== 507)).toEqual([]);
    expect(server.child.exitCode).toBeNull();
    expect(server.child.signalCode).toBeNull();
    expect((await get(server, '/v2/liveness')).status).toBe(200);
    expect((await call(server, 'apis.getApi', { apiId })).status).toBe(200);
    await server.stop();
  }, 60_000);
});
