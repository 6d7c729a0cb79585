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
