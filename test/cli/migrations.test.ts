// keyward CLI: `migrations create` / `migrations list` (the migrations keys.migrateKeys and
// keys.verifyKey {migrationId} name). Usage errors exit 2 with the usage text; a workspace
// that does not exist exits 1 and creates nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, stopAll, tempDir } from '../helpers/server.js';

afterAll(stopAll);

const ALGORITHMS = ['sha256', 'sha256-base64', 'github.com/seamapi/prefixed-api-key'];

async function newWorkspace(dir: string): Promise<string> {
  const res = await cli(['workspaces', 'create'], dir);
  if (res.code !== 0) throw new Error(`workspaces create failed: ${res.stderr}`);
  return res.json.workspaceId as string;
}

describe('migrations create / list', () => {
  let dir = '';
  let wsA = '';
  let wsB = '';
  const made: { migrationId: string; workspaceId: string; algorithm: string }[] = [];
  beforeAll(async () => {
    dir = tempDir();
    wsA = await newWorkspace(dir);
    wsB = await newWorkspace(dir);
  });

  it('list on a store without migrations prints []', async () => {
    const res = await cli(['migrations', 'list'], dir);
    expect(res.code).toBe(0);
    expect(res.json).toEqual([]);
  });

  it.each(ALGORITHMS)('create --algorithm %s prints exactly {migrationId, workspaceId, algorithm}', async (algorithm) => {
    const res = await cli(['migrations', 'create', '--workspace', wsA, '--algorithm', algorithm], dir);
    expect(res.code, res.stderr).toBe(0);
    expect(Object.keys(res.json as object)).toEqual(['migrationId', 'workspaceId', 'algorithm']);
    expect(res.json).toEqual({ migrationId: expect.stringMatching(/^mig_[1-9A-HJ-NP-Za-km-z]+$/), workspaceId: wsA, algorithm });
    expect(res.stdout).toBe(`${JSON.stringify(res.json)}\n`);
    made.push(res.json as (typeof made)[number]);
  });

  it('the --name=value form works too', async () => {
    const res = await cli(['migrations', 'create', `--workspace=${wsB}`, '--algorithm=sha256'], dir);
    expect(res.code, res.stderr).toBe(0);
    expect(res.json).toMatchObject({ workspaceId: wsB, algorithm: 'sha256' });
    made.push(res.json as (typeof made)[number]);
  });

  it('two creates make two migrations with different ids', () => {
    expect(new Set(made.map((m) => m.migrationId)).size).toBe(made.length);
    expect(made).toHaveLength(4);
  });

  it('list shows every migration, in creation order, with createdAt', async () => {
    const res = await cli(['migrations', 'list'], dir);
    expect(res.code, res.stderr).toBe(0);
    const list = res.json as { migrationId: string; workspaceId: string; algorithm: string; createdAt: number }[];
    expect(list.map((m) => Object.keys(m))).toEqual(made.map(() => ['migrationId', 'workspaceId', 'algorithm', 'createdAt']));
    expect(list.map(({ migrationId, workspaceId, algorithm }) => ({ migrationId, workspaceId, algorithm }))).toEqual(made.map(({ migrationId, workspaceId, algorithm }) => ({ migrationId, workspaceId, algorithm })));
    for (const m of list) {
      expect(Number.isInteger(m.createdAt)).toBe(true);
      expect(m.createdAt).toBeGreaterThan(Date.now() - 120_000);
      expect(m.createdAt).toBeLessThanOrEqual(Date.now());
    }
    const times = list.map((m) => m.createdAt);
    expect([...times].sort((a, b) => a - b)).toEqual(times);
  });

  it('list --workspace shows only that workspace\'s migrations', async () => {
    const a = await cli(['migrations', 'list', '--workspace', wsA], dir);
    expect(a.code, a.stderr).toBe(0);
    expect((a.json as { migrationId: string }[]).map((m) => m.migrationId)).toEqual(made.filter((m) => m.workspaceId === wsA).map((m) => m.migrationId));
    expect((a.json as { algorithm: string }[]).map((m) => m.algorithm)).toEqual(ALGORITHMS);
    const b = await cli(['migrations', 'list', '--workspace', wsB], dir);
    expect(b.code, b.stderr).toBe(0);
    expect(b.json).toEqual([{ migrationId: made[3]?.migrationId, workspaceId: wsB, algorithm: 'sha256', createdAt: expect.any(Number) }]);
  });

  it('list --workspace of a workspace without migrations prints []', async () => {
    const wsC = await newWorkspace(dir);
    const res = await cli(['migrations', 'list', '--workspace', wsC], dir);
    expect(res.code, res.stderr).toBe(0);
    expect(res.json).toEqual([]);
  });
});

describe('migrations: errors', () => {
  let dir = '';
  let ws = '';
  beforeAll(async () => {
    dir = tempDir();
    ws = await newWorkspace(dir);
  });

  it.each([
    ['an unknown algorithm', ['--workspace', 'WS', '--algorithm', 'md5']],
    ['an algorithm in the wrong case', ['--workspace', 'WS', '--algorithm', 'SHA256']],
    ['no --algorithm', ['--workspace', 'WS']],
    ['--algorithm without a value', ['--workspace', 'WS', '--algorithm']],
    ['no --workspace', ['--algorithm', 'sha256']],
    ['an extra argument', ['--workspace', 'WS', '--algorithm', 'sha256', 'extra']],
  ])('create with %s → exit code 2 with the usage', async (_why, args) => {
    const res = await cli(['migrations', 'create', ...args.map((a) => (a === 'WS' ? ws : a))], dir);
    expect(res.code).toBe(2);
    expect(res.stdout).toBe('');
    expect(res.stderr).toContain('usage: keyward');
    expect(res.stderr).toContain('migrations create --workspace <id> --algorithm <name>');
  });

  it('a bad algorithm\'s message names the algorithms there are', async () => {
    const res = await cli(['migrations', 'create', '--workspace', ws, '--algorithm', 'bcrypt'], dir);
    expect(res.code).toBe(2);
    for (const a of ALGORITHMS) expect(res.stderr).toContain(a);
    expect(res.stderr).toContain('"bcrypt" is none of them');
  });

  it('list with an extra argument → exit code 2', async () => {
    const res = await cli(['migrations', 'list', 'extra'], dir);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('usage: keyward');
  });

  it('create for a workspace that does not exist → exit 1 naming it; nothing created', async () => {
    const res = await cli(['migrations', 'create', '--workspace', 'ws_doesnotexist', '--algorithm', 'sha256'], dir);
    expect(res.code).toBe(1);
    expect(res.stdout).toBe('');
    expect(res.stderr).toContain('ws_doesnotexist');
    expect(res.stderr).not.toContain('usage: keyward');
  });

  it('list --workspace of a workspace that does not exist → exit 1 naming it', async () => {
    const res = await cli(['migrations', 'list', '--workspace', 'ws_doesnotexist'], dir);
    expect(res.code).toBe(1);
    expect(res.stdout).toBe('');
    expect(res.stderr).toContain('ws_doesnotexist');
  });

  it('none of the refused creates made a migration', async () => {
    const res = await cli(['migrations', 'list'], dir);
    expect(res.code, res.stderr).toBe(0);
    expect(res.json).toEqual([]);
  });
});
