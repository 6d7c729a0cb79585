// Backups (docs/operations.md): `keyward backup` taken while 8 clients write restores to a
// store holding every change acknowledged before the backup began, and clears what killed
// backups left; `keyward restore` refuses a data dir that is not empty, a backup as its
// target and a damaged backup; a restore that did not finish leaves a data dir nothing opens
// until it is run again; `keyward check` of a backup leaves it as taken, and nothing else
// opens one.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { appendFileSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, cli, createApi, expectOk, startServer, stopAll, tempDir, type Server } from '../helpers/server.js';

const CREDITS = 1_000_000;

afterAll(stopAll);

describe('keyward backup under write load, restored', () => {
  let server: Server;
  let apiId: string;
  beforeAll(async () => {
    server = await startServer();
    apiId = await createApi(server);
  });

  it('10 backups taken while 8 clients create keys, spend credits and limit: each restores with every key and spend acknowledged before it began', async () => {
    /** Keys acknowledged, in order, and the VALID verifications each got (a spend of 1). */
    const keys: { keyId: string; key: string }[] = [];
    const spent = new Map<string, number>();
    let running = true;
    const client = async (n: number): Promise<void> => {
      for (let i = 0; running; i++) {
        if (i % 3 === 0 || keys.length < 8) {
          const r = await call(server, 'keys.createKey', { apiId, credits: { remaining: CREDITS } });
          if (r.status === 200) keys.push(r.json.data as { keyId: string; key: string });
        } else if (i % 3 === 1) {
          const k = keys[(i * 7 + n) % keys.length] as { keyId: string; key: string };
          const r = await call(server, 'keys.verifyKey', { key: k.key });
          if (r.status === 200 && (r.json.data as { valid: boolean }).valid) spent.set(k.keyId, (spent.get(k.keyId) ?? 0) + 1);
        } else {
          await call(server, 'ratelimits.limit', { namespace: 'backup', identifier: `id-${n}-${i}`, limit: 10, duration: 60_000 });
        }
      }
    };
    const clients = Array.from({ length: 8 }, (_, n) => client(n));
    const taken: { dir: string; keys: { keyId: string; key: string }[]; spent: Map<string, number> }[] = [];
    try {
      for (let b = 0; b < 10; b++) {
        await new Promise((r) => setTimeout(r, 150));
        // What was acknowledged before the backup began.
        const before = { keys: [...keys], spent: new Map(spent) };
        const dir = join(tempDir(), 'backup');
        const res = await cli(['backup', dir], server.dataDir);
        expect(res.code, res.stderr).toBe(0);
        expect(res.json).toMatchObject({ backup: dir, format: 'keyward-backup', version: 1, bytes: expect.any(Number) as number, sha256: expect.stringMatching(/^[0-9a-f]{64}$/) as string });
        taken.push({ dir, ...before });
      }
    } finally {
      running = false;
      await Promise.all(clients);
    }
    for (const t of taken) {
      const dataDir = tempDir();
      const restored = await cli(['restore', t.dir], dataDir);
      expect(restored.code, restored.stderr).toBe(0);
      // restore checked the records; the last copy is checked in full too.
      if (t === taken.at(-1)) expect((await cli(['check'], dataDir)).json).toMatchObject({ ok: true, problems: [] });
      const copy = await startServer({ dataDir, rootKey: server.rootKey });
      // The keys acknowledged last before the backup (the ones a careless copy loses), and the most spent.
      const spentMost = [...t.spent.entries()].sort((a, b) => b[1] - a[1]).slice(0, 30).map(([keyId]) => ({ keyId }));
      for (const k of [...t.keys.slice(-30), ...spentMost]) {
        const got = expectOk(await call(copy, 'keys.getKey', { keyId: k.keyId })) as { credits: { remaining: number } };
        // Every acknowledged spend is in the copy; spends in flight at the backup may be too.
        expect(got.credits.remaining).toBeLessThanOrEqual(CREDITS - (t.spent.get(k.keyId) ?? 0));
      }
      await copy.stop();
    }
    expect(taken.at(-1)?.keys.length).toBeGreaterThan(20);
  }, 120_000);
});

describe('keyward restore refuses', () => {
  let backup: string;
  beforeAll(async () => {
    const server = await startServer();
    await createApi(server);
    backup = join(tempDir(), 'b');
    expect((await cli(['backup', backup], server.dataDir)).code).toBe(0);
  });

  it('a data dir that is not empty, unless --force', async () => {
    const dataDir = tempDir();
    writeFileSync(join(dataDir, 'something'), 'x');
    const res = await cli(['restore', backup], dataDir);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('is not empty');
    expect(existsSync(join(dataDir, 'data.mdb'))).toBe(false);
    const forced = await cli(['restore', backup, '--force'], dataDir);
    expect(forced.code, forced.stderr).toBe(0);
    expect((await cli(['check'], dataDir)).code).toBe(0);
  });

  it('the store of a running server, even with --force (what it wrote next would be lost)', async () => {
    const running = await startServer();
    const apiId = await createApi(running);
    const res = await cli(['restore', backup, '--force'], running.dataDir);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('a running process has open');
    // The server's store is as it was: what it wrote before and writes now stays.
    expectOk(await call(running, 'keys.createKey', { apiId }));
    expectOk(await call(running, 'apis.getApi', { apiId }));
    await running.stop();
    const after = await startServer({ dataDir: running.dataDir, rootKey: running.rootKey });
    expectOk(await call(after, 'apis.getApi', { apiId }));
    await after.stop();
    const stopped = await cli(['restore', backup, '--force'], running.dataDir);
    expect(stopped.code, stopped.stderr).toBe(0);
  });

  it('a backup whose data file was damaged, or that has no manifest', async () => {
    const damaged = join(tempDir(), 'damaged');
    expect((await cli(['restore', backup], damaged)).code).toBe(0); // a copy to damage…
    const copy = join(tempDir(), 'copy');
    expect((await cli(['backup', copy], damaged)).code).toBe(0);
    appendFileSync(join(copy, 'data.mdb'), Buffer.alloc(4096, 1));
    const res = await cli(['restore', copy], tempDir());
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/the backup changed since it was taken \(a server started on it.*\) or is damaged/);
    writeFileSync(join(copy, 'manifest.json'), readFileSync(join(copy, 'manifest.json'), 'utf8').replace(/"sha256": "[0-9a-f]+"/, '"sha256": "00"'));
    expect((await cli(['restore', copy], tempDir())).stderr).toMatch(/damaged/);
    const bare = tempDir();
    const none = await cli(['restore', bare], tempDir());
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('is not a keyward backup');
  });

  it('the backup itself as the data dir, or a dir holding another backup, even with --force', async () => {
    const other = join(tempDir(), 'other');
    cpSync(backup, other, { recursive: true });
    const taken = readFileSync(join(backup, 'data.mdb'));
    for (const [target, why] of [[backup, 'is the backup being restored'], [other, 'holds a backup (its manifest.json)']] as const) {
      const res = await cli(['restore', backup, '--force'], target);
      expect(res.code).toBe(1);
      expect(res.stderr).toContain(`${target} ${why}: restoring into it would replace the backup's data.mdb`);
      expect(readdirSync(target).sort()).toEqual(['data.mdb', 'manifest.json']);
      expect(readFileSync(join(target, 'data.mdb')).equals(taken)).toBe(true);
    }
    expect((await cli(['check'], backup)).code).toBe(0);
  });

  it('a backup into a directory that is not empty', async () => {
    const server = await startServer();
    const res = await cli(['backup', server.dataDir], server.dataDir);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('not an empty directory');
  });
});

// What a restore killed before its rename leaves (strace -e inject=rename:signal=KILL, or a
// kill during the copy): the backup's data file, whole or in part, under the temporary name.
describe('a restore that did not finish', () => {
  let backup: string;
  let rootKey: string;
  let apiId: string;
  beforeAll(async () => {
    const server = await startServer();
    rootKey = server.rootKey;
    apiId = await createApi(server);
    backup = join(tempDir(), 'b');
    expect((await cli(['backup', backup], server.dataDir)).code).toBe(0);
  });
  const leaveHalfACopy = (dataDir: string): void => {
    const data = readFileSync(join(backup, 'data.mdb'));
    writeFileSync(join(dataDir, 'data.mdb.restoring'), data.subarray(0, data.length / 2));
  };
  const refusedEverywhere = async (dataDir: string, again: string): Promise<void> => {
    for (const args of [['serve'], ['check'], ['workspaces', 'list'], ['export']]) {
      const res = await cli(args, dataDir, { KEYWARD_PORT: '0' });
      expect(res.code, args.join(' ')).toBe(1);
      expect(res.stderr, args.join(' ')).toContain(`a keyward restore into ${dataDir} did not finish`);
      expect(res.stderr, args.join(' ')).toContain(`Run the restore again (${again})`);
    }
  };

  it('into an empty data dir: nothing starts a new, empty store there; the restore run again takes it', async () => {
    const dataDir = tempDir();
    leaveHalfACopy(dataDir);
    await refusedEverywhere(dataDir, `keyward restore <backup> --data-dir ${dataDir}`);
    expect(readdirSync(dataDir)).toEqual(['data.mdb.restoring']);
    const again = await cli(['restore', backup], dataDir);
    expect(again.code, again.stderr).toBe(0);
    expect(readdirSync(dataDir)).not.toContain('data.mdb.restoring');
    expect((await cli(['check'], dataDir)).code).toBe(0);
    const server = await startServer({ dataDir, rootKey });
    expectOk(await call(server, 'apis.getApi', { apiId }));
    await server.stop();
  });

  it('with --force over a store: nothing opens the store it was replacing; the restore run again with --force takes it', async () => {
    const dataDir = tempDir();
    expect((await cli(['restore', backup], dataDir)).code).toBe(0);
    leaveHalfACopy(dataDir);
    await refusedEverywhere(dataDir, `keyward restore <backup> --data-dir ${dataDir} --force`);
    const check = await cli(['check'], dataDir);
    expect(check.json.problems[0]).toContain('data.mdb is the store the restore was replacing');
    expect((await cli(['restore', backup], dataDir)).stderr).toContain('is not empty');
    const again = await cli(['restore', backup, '--force'], dataDir);
    expect(again.code, again.stderr).toBe(0);
    expect((await cli(['check'], dataDir)).code).toBe(0);
  });
});

describe('keyward backup after one that was killed', () => {
  it('removes the hidden partial dirs of backups whose process is gone, and nothing else', async () => {
    const server = await startServer();
    const parent = tempDir();
    const gone = spawnSync(process.execPath, ['-e', '']).pid;
    const partial = (name: string, pid: number, file: string): string => {
      mkdirSync(join(parent, `.${name}.partial-${pid}`));
      writeFileSync(join(parent, `.${name}.partial-${pid}`, file), 'x');
      return `.${name}.partial-${pid}`;
    };
    partial('b1', gone, 'data.mdb');
    const running = partial('b2', process.pid, 'data.mdb');
    const notOurs = partial('notes', gone, 'notes.txt');
    expect((await cli(['backup', join(parent, 'b3')], server.dataDir)).code).toBe(0);
    expect(readdirSync(parent).sort()).toEqual([running, notOurs, 'b3'].sort());
  });
});

describe('a backup stays as it was taken', () => {
  it('keyward check checks it (its manifest, and its records on a copy) without changing it; the server and the commands that open a store refuse it; restore takes it', async () => {
    const server = await startServer();
    const apiId = await createApi(server);
    expectOk(await call(server, 'keys.createKey', { apiId }));
    const backup = join(tempDir(), 'b');
    expect((await cli(['backup', backup], server.dataDir)).code).toBe(0);
    const files = readdirSync(backup).sort();
    const sha = (): string => createHash('sha256').update(readFileSync(join(backup, 'data.mdb'))).digest('hex');
    const taken = sha();

    const checked = await cli(['check'], backup);
    expect(checked.code, checked.stderr).toBe(0);
    expect(checked.json.ok).toBe(true);
    expect(checked.json.records).not.toBeNull();
    for (const args of [['export'], ['workspaces', 'list'], ['serve']]) {
      const refused = await cli(args, backup, { KEYWARD_PORT: '0' });
      expect(refused.code, args.join(' ')).toBe(1);
      expect(refused.stderr).toContain('is a backup (it holds manifest.json)');
    }
    expect(readdirSync(backup).sort()).toEqual(files);
    expect(sha()).toBe(taken);
    const restored = await cli(['restore', backup], tempDir());
    expect(restored.code, restored.stderr).toBe(0);

    // A backup that changed since: check says so, as restore would.
    appendFileSync(join(backup, 'data.mdb'), Buffer.alloc(4096));
    const damaged = await cli(['check'], backup);
    expect(damaged.code).toBe(1);
    expect(damaged.json.problems.join('\n')).toMatch(/the backup changed since it was taken/);
  });
});
