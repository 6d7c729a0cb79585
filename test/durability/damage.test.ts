// Integrity at open (docs/operations.md, "Integrity"): a store damaged on purpose — pages
// overwritten, a table dropped, the data file truncated — is refused by the server at start
// with a message naming the problem and the way back, and by `keyward check` (exit 1).
// The damage is done to a compacted copy (`keyward backup`, then `keyward restore`), where
// every page is in use, so each overwritten page is one the store needs.
import { execFileSync } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, rmSync, truncateSync, writeSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, cli, createApi, startServer, stopAll, tempDir } from '../helpers/server.js';

let backup: string;
let rootKey: string;
let lmdbDrop: string;

afterAll(stopAll);

beforeAll(async () => {
  const server = await startServer();
  rootKey = server.rootKey;
  const apiId = await createApi(server);
  for (let i = 0; i < 300; i++) await call(server, 'keys.createKey', { apiId, name: `key-${i}`, meta: { note: 'x'.repeat(200) }, credits: { remaining: 100 } });
  backup = join(tempDir(), 'backup');
  expect((await cli(['backup', backup], server.dataDir)).code).toBe(0);
  await server.stop();
  lmdbDrop = join(tempDir(), 'lmdb-drop');
  execFileSync('cc', ['-O1', '-o', lmdbDrop, fileURLToPath(new URL('../helpers/lmdbDrop.c', import.meta.url)), '-llmdb']);
}, 60_000);

/** A fresh data dir holding the backup (every page in use; the file may be longer). */
async function restored(): Promise<string> {
  const dataDir = tempDir();
  const res = await cli(['restore', backup], dataDir);
  expect(res.code, res.stderr).toBe(0);
  return dataDir;
}

/** Pages of the data file in use (the file itself may be longer: its map is reserved). */
async function usedPages(dataDir: string): Promise<number> {
  return ((await cli(['check'], dataDir)).json as { usedBytes: number }).usedBytes / PAGE;
}

const PAGE = 4096;

function overwritePage(dataDir: string, pgno: number): void {
  const fd = openSync(join(dataDir, 'data.mdb'), 'r+');
  writeSync(fd, randomBytes(PAGE), 0, PAGE, pgno * PAGE);
  closeSync(fd);
}

/** The main tree's root page, from the newer meta page (LMDB 0.9: md_root of the main Db at byte 128). */
function mainRoot(dataDir: string): number {
  const file = readFileSync(join(dataDir, 'data.mdb'));
  const meta = [0, PAGE].map((at) => ({ txn: file.readBigUInt64LE(at + 16 + 128), root: Number(file.readBigUInt64LE(at + 16 + 112)) }));
  return (meta[0]!.txn >= meta[1]!.txn ? meta[0] : meta[1])!.root;
}

/** Refused by `keyward check` and at start, each naming `problem`. */
async function refused(dataDir: string, problem: RegExp): Promise<void> {
  const check = await cli(['check'], dataDir);
  expect(check.code, check.stdout + check.stderr).toBe(1);
  expect((check.json as { ok: boolean; problems: string[] }).ok).toBe(false);
  expect((check.json as { problems: string[] }).problems.join('\n')).toMatch(problem);
  const started = await startServer({ dataDir, rootKey }).then(
    async (s) => {
      await s.stop();
      return 'served';
    },
    (err: Error) => err.message,
  );
  expect(started).toMatch(/exited early with code 1/);
  expect(started).toMatch(/is damaged, so keyward will not serve it/);
  expect(started).toMatch(problem);
  expect(started).toContain('keyward restore');
}

describe('a damaged store is refused at start and by keyward check', () => {
  it('the copy is sound before it is damaged', async () => {
    const dataDir = await restored();
    const check = await cli(['check'], dataDir);
    expect(check.json).toMatchObject({ ok: true, problems: [] });
    expect((check.json as { records: number }).records).toBeGreaterThan(600);
  });

  it("pages overwritten: the main tree's root", async () => {
    const dataDir = await restored();
    overwritePage(dataDir, mainRoot(dataDir));
    await refused(dataDir, /\(main\): page \d+ (says it is page|has flags)/);
  });

  it('pages overwritten: a run in the middle of the file', async () => {
    const dataDir = await restored();
    const pages = await usedPages(dataDir);
    for (let p = Math.floor(pages / 2); p < Math.floor(pages / 2) + 3; p++) overwritePage(dataDir, p);
    await refused(dataDir, /page \d+/);
  });

  it('a table dropped', async () => {
    const dataDir = await restored();
    execFileSync(lmdbDrop, [dataDir, 'apis']);
    await refused(dataDir, /table apis is missing/);
  });

  it('a truncated data file (its one problem, not a writer moving the store on)', async () => {
    const dataDir = await restored();
    truncateSync(join(dataDir, 'data.mdb'), Math.floor((await usedPages(dataDir)) * 0.6) * PAGE);
    await refused(dataDir, /truncated/);
    expect((await cli(['check'], dataDir)).stdout).not.toContain('kept changing');
  });

  it('one meta page overwritten (LMDB needs both to open)', async () => {
    const dataDir = await restored();
    overwritePage(dataDir, 1);
    await refused(dataDir, /LMDB cannot open the data file \(MDB_INVALID/);
  });

  it('the data file removed: refused, never started again as a new, empty store', async () => {
    const dataDir = await restored();
    const served = await startServer({ dataDir, rootKey });
    await served.stop();
    rmSync(join(dataDir, 'data.mdb'));
    const started = await startServer({ dataDir, rootKey }).then(
      async (s) => {
        await s.stop();
        return 'served';
      },
      (err: Error) => err.message,
    );
    expect(started).toMatch(/is damaged, so keyward will not serve it/);
    expect(started).toMatch(/data file data\.mdb is missing, though lock\.mdb/);
    expect(existsSync(join(dataDir, 'data.mdb'))).toBe(false);
    const check = await cli(['check'], dataDir);
    expect(check.code).toBe(1);
    expect(check.stderr).toMatch(/data\.mdb is missing/);
  });
});
