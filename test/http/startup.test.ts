// Start-up: configuration errors stop the daemon with a message naming the variable;
// a restart on a used data dir does not bootstrap again.
import { afterAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { call, cli, expectError, expectOk, randomRootKey, startServer, stopAll, tempDir } from '../helpers/server.js';

afterAll(stopAll);

const A_FILE = join(tempDir(), 'a-file');
writeFileSync(A_FILE, 'not a directory');

describe('start-up', () => {
  it.each([
    ['a root key shorter than 16 characters', { KEYWARD_ROOT_KEY: 'short' }, 'KEYWARD_ROOT_KEY'],
    ['a non-numeric body limit', { KEYWARD_MAX_BODY_BYTES: 'lots' }, 'KEYWARD_MAX_BODY_BYTES'],
    ['an unknown durability', { KEYWARD_DURABILITY: 'eventually' }, 'KEYWARD_DURABILITY'],
    ['a host that does not resolve', { KEYWARD_HOST: 'not_a_host!!' }, 'KEYWARD_HOST'],
    ['a data dir that is a file', { KEYWARD_DATA_DIR: A_FILE }, 'KEYWARD_DATA_DIR'],
  ])('%s → exits non-zero naming %s', async (_why, env, name) => {
    await expect(startServer({ env })).rejects.toThrow(new RegExp(`exited early with code [1-9][\\s\\S]*${name}`));
  });

  // uWS listens with SO_REUSEPORT, so src/main.ts probes the port first: a second daemon
  // (even on another data dir) would otherwise silently share the port with the first.
  it('a port already in use → exits non-zero', async () => {
    const first = await startServer();
    await expect(startServer({ env: { KEYWARD_PORT: String(first.port) } })).rejects.toThrow(/exited early with code [1-9][\s\S]*the port is in use/);
    expectOk(await call(first, 'apis.createApi', { name: 'still-serving' }));
  });

  it('KEYWARD_ROOT_KEY only bootstraps an empty data dir', async () => {
    const first = await startServer();
    expectOk(await call(first, 'apis.createApi', { name: 'first-run' }));
    expect(await first.stop()).toBe(0);
    const other = randomRootKey();
    const again = await startServer({ dataDir: first.dataDir, rootKey: other });
    expectError(await call(again, 'apis.createApi', { name: 'with-other-key' }), 401);
    expectOk(await call(again, 'apis.createApi', { name: 'with-first-key' }, { rootKey: first.rootKey }));
    const keys = await cli(['root-keys', 'list'], first.dataDir);
    expect(keys.json).toHaveLength(1);
    expect(again.output().stderr).toContain('KEYWARD_ROOT_KEY is not a root key of this store');
  });

  it('a data dir set up through the CLI before the first start is not bootstrapped again', async () => {
    const dir = tempDir();
    const ws = (await cli(['workspaces', 'create'], dir)).json.workspaceId as string;
    const made = (await cli(['root-keys', 'create', '--workspace', ws, '--permission', '*'], dir)).json as { key: string };
    const server = await startServer({ dataDir: dir, rootKey: randomRootKey() });
    expect(server.output().stderr).not.toContain('bootstrapped');
    expectOk(await call(server, 'apis.createApi', { name: 'with-the-cli-key' }, { rootKey: made.key }));
    expectError(await call(server, 'apis.createApi', { name: 'with-the-env-key' }), 401);
    expect((await cli(['workspaces', 'list'], dir)).json).toEqual([expect.objectContaining({ workspaceId: ws })]);
    expect((await cli(['root-keys', 'list'], dir)).json).toHaveLength(1);
  });

  it('a store with a workspace but no root key starts with a warning saying how to make one', async () => {
    const dir = tempDir();
    await cli(['workspaces', 'create'], dir);
    const server = await startServer({ dataDir: dir });
    expect(server.output().stderr).toContain('the store has no root key');
    expectError(await call(server, 'apis.createApi', { name: 'nobody' }), 401);
  });
});
