// keyward CLI: workspaces and root keys on the server's store, while the server runs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, cli, CLI_JS, expectError, expectOk, runNode, startServer, stopAll, tempDir, type Server } from '../helpers/server.js';

let server: Server;
beforeAll(async () => {
  server = await startServer();
});
afterAll(stopAll);

describe('workspaces', () => {
  it('create prints {workspaceId}; list shows it', async () => {
    const dir = tempDir();
    const created = await cli(['workspaces', 'create'], dir);
    expect(created.code).toBe(0);
    expect(Object.keys(created.json as object)).toEqual(['workspaceId']);
    expect(created.json.workspaceId).toMatch(/^ws_\w+$/);
    const second = await cli(['workspaces', 'create'], dir);
    const list = await cli(['workspaces', 'list'], dir);
    expect(list.code).toBe(0);
    const ids = (list.json as { workspaceId: string }[]).map((w) => w.workspaceId).sort();
    expect(ids).toEqual([created.json.workspaceId, second.json.workspaceId].sort());
  });

  it('node dist/src/cli.js runs the command too (it does not exit 0 having done nothing)', async () => {
    const dir = tempDir();
    const created = await runNode([CLI_JS, 'workspaces', 'create'], dir);
    expect(created.code).toBe(0);
    expect(JSON.parse(created.stdout)).toEqual({ workspaceId: expect.stringMatching(/^ws_\w+$/) });
    const bad = await runNode([CLI_JS, 'no-such-command'], dir);
    expect(bad.code).toBe(2);
  });

  it('--data-dir works like KEYWARD_DATA_DIR', async () => {
    const dir = tempDir();
    const created = await cli(['workspaces', 'create', '--data-dir', dir], tempDir());
    expect(created.code).toBe(0);
    const list = await cli(['workspaces', 'list'], dir);
    expect((list.json as { workspaceId: string }[]).map((w) => w.workspaceId)).toEqual([created.json.workspaceId]);
  });
});

describe('root-keys', () => {
  it('create prints {workspaceId, rootKeyId, key}', async () => {
    const dir = tempDir();
    const ws = (await cli(['workspaces', 'create'], dir)).json.workspaceId as string;
    const res = await cli(['root-keys', 'create', '--workspace', ws, '--permission', 'apis.*.read_api', '--permission', 'api.*.create_api'], dir);
    expect(res.code).toBe(0);
    expect(Object.keys(res.json as object).sort()).toEqual(['key', 'rootKeyId', 'workspaceId']);
    expect(res.json.workspaceId).toBe(ws);
    expect(res.json.rootKeyId).toMatch(/^rk_\w+$/);
    expect(typeof res.json.key).toBe('string');
    expect((res.json.key as string).length).toBeGreaterThanOrEqual(16);
  });

  it.each([
    ['missing --workspace', ['--permission', '*']],
    ['missing --permission', ['--workspace', 'WS']],
    ['a bad permission', ['--workspace', 'WS', '--permission', 'apis.read']],
    ['a permission with spaces', ['--workspace', 'WS', '--permission', 'apis.* .read_api']],
    ['--workspace without a value', ['--permission', '*', '--workspace']],
  ])('create with %s → exit code 2 and a message', async (_why, args) => {
    const dir = tempDir();
    const ws = (await cli(['workspaces', 'create'], dir)).json.workspaceId as string;
    const res = await cli(['root-keys', 'create', ...args.map((a) => (a === 'WS' ? ws : a))], dir);
    expect(res.code).toBe(2);
    expect(res.stderr.length).toBeGreaterThan(0);
    expect(res.stdout).toBe('');
  });

  it('create for a workspace that does not exist fails without making a key', async () => {
    const dir = tempDir();
    const res = await cli(['root-keys', 'create', '--workspace', 'ws_doesnotexist', '--permission', '*'], dir);
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain('ws_doesnotexist');
    expect((await cli(['root-keys', 'list'], dir)).json).toEqual([]);
  });

  it('list shows start and permissions but never the hash or the key', async () => {
    const dir = tempDir();
    const ws = (await cli(['workspaces', 'create'], dir)).json.workspaceId as string;
    const made = await cli(['root-keys', 'create', '--workspace', ws, '--permission', 'api.*.read_api'], dir);
    const list = await cli(['root-keys', 'list'], dir);
    expect(list.code).toBe(0);
    const rows = list.json as Record<string, unknown>[];
    expect(rows).toHaveLength(1);
    const row = rows[0] as Record<string, unknown>;
    expect(row.rootKeyId).toBe(made.json.rootKeyId);
    expect(row.workspaceId).toBe(ws);
    expect(row.permissions).toEqual(['apis.*.read_api']);
    expect(typeof row.start).toBe('string');
    expect((made.json.key as string).startsWith(row.start as string)).toBe(true);
    expect((row.start as string).length).toBeLessThan((made.json.key as string).length / 2);
    expect(row).not.toHaveProperty('hash');
    expect(row).not.toHaveProperty('key');
    expect(list.stdout).not.toContain(made.json.key as string);
    // No SHA-256 (base64 or hex) of anything appears either.
    expect(list.stdout).not.toMatch(/[A-Za-z0-9+/]{43}=/);
    expect(list.stdout).not.toMatch(/[0-9a-f]{64}/);
  });

  it('list --workspace filters', async () => {
    const dir = tempDir();
    const a = (await cli(['workspaces', 'create'], dir)).json.workspaceId as string;
    const b = (await cli(['workspaces', 'create'], dir)).json.workspaceId as string;
    await cli(['root-keys', 'create', '--workspace', a, '--permission', '*'], dir);
    const kb = await cli(['root-keys', 'create', '--workspace', b, '--permission', '*'], dir);
    const list = await cli(['root-keys', 'list', '--workspace', b], dir);
    expect((list.json as { rootKeyId: string }[]).map((r) => r.rootKeyId)).toEqual([kb.json.rootKeyId]);
  });

  it('revoke removes it from the list; revoking an unknown key → exit 1', async () => {
    const dir = tempDir();
    const ws = (await cli(['workspaces', 'create'], dir)).json.workspaceId as string;
    const made = await cli(['root-keys', 'create', '--workspace', ws, '--permission', '*'], dir);
    const revoked = await cli(['root-keys', 'revoke', made.json.rootKeyId as string], dir);
    expect(revoked.code).toBe(0);
    expect((await cli(['root-keys', 'list'], dir)).json).toEqual([]);
    const again = await cli(['root-keys', 'revoke', made.json.rootKeyId as string], dir);
    expect(again.code).toBe(1);
    const unknown = await cli(['root-keys', 'revoke', 'rk_doesnotexist'], dir);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('rk_doesnotexist');
  });

  it('revoke without an id → exit code 2', async () => {
    expect((await cli(['root-keys', 'revoke'], tempDir())).code).toBe(2);
  });

  it('an unknown command, or an unknown serve argument → exit code 2', async () => {
    expect((await cli(['frobnicate'], tempDir())).code).toBe(2);
    expect((await cli(['root-keys', 'frobnicate'], tempDir())).code).toBe(2);
    const serve = await cli(['serve', '--prot', '9000'], tempDir());
    expect(serve.code).toBe(2);
    expect(serve.stderr).toContain("'--prot'");
  });

  it.each([
    ['workspaces create extra'],
    ['workspaces list extra'],
    ['root-keys list extra'],
    ['root-keys list --permission x'],
    ['workspaces create --workspace x'],
    ['root-keys revoke rk_a rk_b'],
    ['root-keys revoke --workspace'],
    ['workspaces list --data-dir'],
  ])('%s → exit code 2, nothing done', async (command) => {
    const dir = tempDir();
    const res = await cli(command.split(' '), dir);
    expect(res.code).toBe(2);
    expect(res.stdout).toBe('');
    expect(res.stderr).toMatch(/unexpected argument|needs/);
    expect((await cli(['workspaces', 'list'], dir)).json).toEqual([]);
  });

  it('list --workspace of a workspace that does not exist → exit 1', async () => {
    const res = await cli(['root-keys', 'list', '--workspace', 'ws_doesnotexist'], tempDir());
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('ws_doesnotexist');
  });

  it('help, --help and -h print the usage and exit 0', async () => {
    // '--' keeps node (which runs the CLI here) from taking --help for itself.
    for (const args of [['help'], ['--', '--help'], ['root-keys', '-h'], ['bench', '-h']]) {
      const res = await cli(args, tempDir());
      expect(res.code, args.join(' ')).toBe(0);
      expect(res.stdout).toContain('usage: keyward');
    }
  });
});

describe('against the running server', () => {
  it('a key created by the CLI works at once, with exactly its grants', async () => {
    const ws = (await cli(['root-keys', 'list'], server.dataDir)).json[0].workspaceId as string;
    const made = await cli(['root-keys', 'create', '--workspace', ws, '--permission', 'api.*.create_api', '--permission', 'apis.*.read_api'], server.dataDir);
    expect(made.code).toBe(0);
    const created = expectOk(await call(server, 'apis.createApi', { name: 'from-cli-key' }, { rootKey: made.json.key as string }));
    expect(expectOk(await call(server, 'apis.getApi', { apiId: created.apiId }, { rootKey: made.json.key as string })).name).toBe('from-cli-key');
    expectError(await call(server, 'apis.deleteApi', { apiId: created.apiId }, { rootKey: made.json.key as string }), 403);
  });

  it('a key in a new workspace sees none of the bootstrap workspace', async () => {
    const apiId = expectOk(await call(server, 'apis.createApi', { name: 'bootstrap-api' })).apiId as string;
    const ws = (await cli(['workspaces', 'create'], server.dataDir)).json.workspaceId as string;
    const made = await cli(['root-keys', 'create', '--workspace', ws, '--permission', '*'], server.dataDir);
    expectError(await call(server, 'apis.getApi', { apiId }, { rootKey: made.json.key as string }), 404, 'api_not_found');
    const own = expectOk(await call(server, 'apis.createApi', { name: 'foreign-api' }, { rootKey: made.json.key as string })).apiId as string;
    expectError(await call(server, 'apis.getApi', { apiId: own }), 404, 'api_not_found');
  });

  it('the bootstrap key is listed (start only) and works', async () => {
    const list = await cli(['root-keys', 'list'], server.dataDir);
    expect(list.stdout).not.toContain(server.rootKey);
    const boot = (list.json as { permissions: string[]; start: string }[]).find((r) => server.rootKey.startsWith(r.start));
    expect(boot?.permissions).toEqual(['*']);
  });
});
