// keyward export / keyward import (docs/operations.md, "Export and import"): a populated store
// exported, imported into an empty data dir and exported again is the same file; the imported
// keys verify as they did; --workspace keeps one workspace's records; an export taken while a
// server writes is one consistent state; import refuses what is not an export or conflicts
// with the store, writing nothing; importing twice skips everything the second time; in cluster
// mode import writes through PostgreSQL and export reads a replica brought up to date.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPostgres, type ThrowawayPostgres } from '../../bench/lib/postgres.js';
import { seamKey } from '../helpers/migrations.js';
import { bootstrapWorkspace, call, cli, expectOk, foreignRootKey, randomRootKey, ROOT, runNode, startServer, stopAll, tempDir, type Server } from '../helpers/server.js';

type Data = Record<string, unknown>;
interface Line {
  type: string;
  record?: Data & { id: string; workspaceId?: string; namespaceId?: string };
  credits?: Data;
  counts?: Record<string, number>;
  workspaceId?: string;
}

let source: Server;
let otherRootKey: string;
let otherWorkspace: string;
/** The source's keys: their strings and ids, in creation order. */
const keys: { key: string; keyId: string }[] = [];
const NAMESPACE = 'transfer-ns';
/** A key moved in with keys.migrateKeys, pending under its placeholder hash until verified with its migration. */
const moved = { key: '', migrationId: '' };
let exported = '';

const parse = (text: string): Line[] => text.trimEnd().split('\n').map((l) => JSON.parse(l) as Line);

async function exportOf(dataDir: string, args: string[] = [], env: Record<string, string> = {}): Promise<string> {
  const res = await cli(['export', ...args], dataDir, env);
  expect(res.code, res.stderr).toBe(0);
  return res.stdout;
}

/** A file holding `text`, for import. */
function file(text: string): string {
  const at = path.join(tempDir(), 'export.jsonl');
  writeFileSync(at, text);
  return at;
}

/** What a server answers about the source's data (rate-limit windows aside: they are not exported). */
async function answers(server: Pick<Server, 'url' | 'rootKey'>): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const { key, keyId } of keys) {
    const v = expectOk(await call(server, 'keys.verifyKey', { key, credits: { cost: 0 }, permissions: 'docs.read' })) as Data;
    out.push({ ...v, ratelimits: undefined });
    out.push(expectOk(await call(server, 'keys.getKey', { keyId })));
  }
  out.push(expectOk(await call(server, 'permissions.listPermissions', {})));
  out.push(expectOk(await call(server, 'permissions.listRoles', {})));
  out.push(expectOk(await call(server, 'identities.listIdentities', {})));
  out.push(expectOk(await call(server, 'ratelimits.getOverride', { namespace: NAMESPACE, identifier: 'vip_*' })));
  out.push(expectOk(await call(server, 'ratelimits.listOverrides', { namespace: 'other-ns' }, { rootKey: otherRootKey })));
  return out;
}

beforeAll(async () => {
  source = await startServer();
  const s = source;
  const apiId = (expectOk(await call(s, 'apis.createApi', { name: 'transfer' })) as { apiId: string }).apiId;
  expectOk(await call(s, 'permissions.createPermission', { name: 'Read docs', slug: 'docs.read', description: 'reads the docs' }));
  expectOk(await call(s, 'permissions.createPermission', { name: 'Write docs', slug: 'docs.write' }));
  expectOk(await call(s, 'permissions.createRole', { name: 'reader', description: 'reads', permissions: ['docs.read'] }));
  expectOk(await call(s, 'identities.createIdentity', { externalId: 'user_shared', meta: { plan: 'pro' }, ratelimits: [{ name: 'shared', limit: 100, duration: 60_000, autoApply: true }] }));
  const shapes: Data[] = [
    { credits: { remaining: 100, refill: { interval: 'daily', amount: 100 } }, roles: ['reader'], externalId: 'user_shared', ratelimits: [{ name: 'rps', limit: 10, duration: 1000, autoApply: true }] },
    { credits: { remaining: 7, refill: { interval: 'monthly', amount: 50, refillDay: 15 } }, permissions: ['docs.write', 'docs.read'], prefix: 'pre', name: 'monthly', meta: { tier: 3, tags: ['a'] } },
    { credits: { remaining: 0 }, enabled: false, expires: Date.now() + 86_400_000 },
    { externalId: 'user_new', permissions: ['docs.auto'] },
    {},
  ];
  for (const shape of shapes) keys.push(expectOk(await call(s, 'keys.createKey', { apiId, ...shape })) as { key: string; keyId: string });
  // Spent, so the balance exported is not the one the key was created with.
  expectOk(await call(s, 'keys.verifyKey', { key: keys[0]?.key, credits: { cost: 3 } }));
  expectOk(await call(s, 'ratelimits.limit', { namespace: NAMESPACE, identifier: 'x', limit: 5, duration: 60_000 }));
  expectOk(await call(s, 'ratelimits.setOverride', { namespace: NAMESPACE, identifier: 'vip_*', limit: 500, duration: 60_000 }));
  expectOk(await call(s, 'ratelimits.setOverride', { namespace: NAMESPACE, identifier: 'exact_1', limit: 0, duration: 1000 }));
  const home = await bootstrapWorkspace(s.dataDir);
  const migration = await cli(['migrations', 'create', '--workspace', home, '--algorithm', 'github.com/seamapi/prefixed-api-key'], s.dataDir);
  expect(migration.code, migration.stderr).toBe(0);
  const legacy = seamKey();
  Object.assign(moved, { key: legacy.key, migrationId: migration.json.migrationId as string });
  expect(expectOk(await call(s, 'keys.migrateKeys', { migrationId: moved.migrationId, apiId, keys: [{ hash: legacy.hash }] })).failed).toEqual([]);
  // A deleted API and its key are not exported.
  const gone = (expectOk(await call(s, 'apis.createApi', { name: 'deleted' })) as { apiId: string }).apiId;
  expectOk(await call(s, 'keys.createKey', { apiId: gone }));
  expectOk(await call(s, 'apis.deleteApi', { apiId: gone }));
  // A second workspace with an API, a key and a namespace with an override.
  otherRootKey = await foreignRootKey(s);
  const other = { url: s.url, rootKey: otherRootKey };
  const otherApi = (expectOk(await call(other, 'apis.createApi', { name: 'other' })) as { apiId: string }).apiId;
  expectOk(await call(other, 'keys.createKey', { apiId: otherApi, credits: { remaining: 5 } }));
  expectOk(await call(other, 'ratelimits.limit', { namespace: 'other-ns', identifier: 'y', limit: 5, duration: 60_000 }));
  expectOk(await call(other, 'ratelimits.setOverride', { namespace: 'other-ns', identifier: 'z', limit: 9, duration: 60_000 }));
  expectOk(await call(other, 'keys.createKey', { apiId: otherApi }));
  otherWorkspace = ((await cli(['workspaces', 'list'], s.dataDir)).json as { workspaceId: string }[]).map((w) => w.workspaceId).find((w) => w !== home) ?? '';
  const created = await cli(['migrations', 'create', '--workspace', otherWorkspace, '--algorithm', 'sha256'], s.dataDir);
  expect(created.code, created.stderr).toBe(0);
  exported = await exportOf(s.dataDir);
}, 60_000);

afterAll(stopAll);

describe('keyward export', () => {
  it('writes a header, every kind of record in order, and an end line with the counts', () => {
    const lines = parse(exported);
    expect(lines[0]).toEqual({ type: 'keyward-export', version: 1 });
    const end = lines.at(-1);
    expect(end?.type).toBe('end');
    const types = lines.slice(1, -1).map((l) => l.type);
    expect([...new Set(types)]).toEqual(['workspace', 'migration', 'root_key', 'api', 'permission', 'role', 'identity', 'ratelimit_namespace', 'ratelimit_override', 'key']);
    expect(end?.counts).toEqual({ workspaces: 2, migrations: 2, root_keys: 2, apis: 2, permissions: 3, roles: 1, identities: 2, ratelimit_namespaces: 2, ratelimit_overrides: 3, keys: 8, credits: 4 });
    // Hashes, never a key or a root key.
    for (const secret of [source.rootKey, otherRootKey, ...keys.map((k) => k.key)]) expect(exported).not.toContain(secret);
    const first = lines.find((l) => l.record?.id === keys[0]?.keyId);
    expect(first?.record?.hash).toMatch(/^[A-Za-z0-9+/]{43}=$/);
    expect(first?.credits).toEqual({ remaining: 97, refillAmount: 100, refillDay: 0, lastRefillAtMs: expect.any(Number) });
    expect(lines.find((l) => l.record?.id === keys[1]?.keyId)?.credits).toMatchObject({ remaining: 7, refillAmount: 50, refillDay: 15 });
    expect(lines.find((l) => l.record?.id === keys[4]?.keyId)?.credits).toBeUndefined();
    expect(exported).not.toContain('"deleted"');
  });

  it('is the same bytes each time, and after import into an empty data dir and export again', async () => {
    expect(await exportOf(source.dataDir)).toBe(exported);
    const target = tempDir();
    const res = await cli(['import', file(exported)], target);
    expect(res.code, res.stderr).toBe(0);
    expect(res.json).toEqual({ imported: parse(exported).at(-1)?.counts, skipped: 0 });
    expect(await exportOf(target)).toBe(exported);
    const check = await cli(['check'], target);
    expect(check.code, check.stdout).toBe(0);
  });

  it('--workspace writes that workspace’s records only: the lines of the full export that are its own', async () => {
    const only = await exportOf(source.dataDir, ['--workspace', otherWorkspace]);
    const lines = parse(only);
    expect(lines[0]).toEqual({ type: 'keyward-export', version: 1, workspaceId: otherWorkspace });
    const namespaces = new Set(lines.filter((l) => l.type === 'ratelimit_namespace').map((l) => l.record?.id));
    const own = (l: Line): boolean => l.record?.id === otherWorkspace || l.record?.workspaceId === otherWorkspace || namespaces.has(l.record?.namespaceId);
    const records = lines.slice(1, -1);
    expect(records.every(own)).toBe(true);
    const full = parse(exported).slice(1, -1);
    expect(records).toEqual(full.filter(own));
    expect(lines.at(-1)?.counts).toEqual({ workspaces: 1, migrations: 1, root_keys: 1, apis: 1, permissions: 0, roles: 0, identities: 0, ratelimit_namespaces: 1, ratelimit_overrides: 1, keys: 2, credits: 1 });
    const unknown = await cli(['export', '--workspace', 'ws_nope'], source.dataDir);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('workspace ws_nope does not exist');
    expect(unknown.stdout).toBe('');
  });

  it('while a server writes: one consistent state, with every key acknowledged before it began', async () => {
    const srv = await startServer();
    const apiId = (expectOk(await call(srv, 'apis.createApi', { name: 'busy' })) as { apiId: string }).apiId;
    const acknowledged: string[] = [];
    let writing = true;
    const writers = Array.from({ length: 4 }, async () => {
      while (writing) {
        const k = expectOk(await call(srv, 'keys.createKey', { apiId, credits: { remaining: 10 }, roles: [] })) as { key: string; keyId: string };
        acknowledged.push(k.keyId);
        expectOk(await call(srv, 'keys.verifyKey', { key: k.key, credits: { cost: 1 } }));
      }
    });
    while (acknowledged.length < 50) await new Promise((r) => setTimeout(r, 20));
    const before = [...acknowledged];
    const text = await exportOf(srv.dataDir);
    const after = acknowledged.length;
    writing = false;
    await Promise.all(writers);
    const ids = new Set(parse(text).filter((l) => l.type === 'key').map((l) => l.record?.id));
    for (const id of before) expect(ids.has(id)).toBe(true);
    // At most the writers' calls in flight when it ended besides.
    expect(ids.size).toBeLessThanOrEqual(after + 4);
    // Imports into an empty data dir whose store checks out.
    const target = tempDir();
    const res = await cli(['import', file(text)], target);
    expect(res.code, res.stderr).toBe(0);
    expect(res.json.imported.keys).toBe(ids.size);
    expect((await cli(['check'], target)).code).toBe(0);
  }, 60_000);
});

describe('keyward import', () => {
  it('the imported keys verify as on the source, with their credits, roles, permissions, identities and overrides', async () => {
    const expected = await answers(source);
    const target = tempDir();
    expect((await cli(['import', file(exported)], target)).code).toBe(0);
    // The root keys came along: the source's works on the imported store.
    const imported = await startServer({ dataDir: target, rootKey: source.rootKey });
    expect(await answers(imported)).toEqual(expected);
    const spent = expectOk(await call(imported, 'keys.verifyKey', { key: keys[0]?.key, credits: { cost: 2 }, permissions: 'docs.read' })) as Data;
    expect(spent).toMatchObject({ valid: true, code: 'VALID', credits: 95 });
    expect(expectOk(await call(imported, 'ratelimits.limit', { namespace: NAMESPACE, identifier: 'exact_1', limit: 5, duration: 60_000 }))).toMatchObject({ success: false, limit: 0 });
    // The moved-in key is found by its migration, and then without it.
    expect(expectOk(await call(imported, 'keys.verifyKey', { key: moved.key }))).toMatchObject({ valid: false, code: 'NOT_FOUND' });
    expect(expectOk(await call(imported, 'keys.verifyKey', { key: moved.key, migrationId: moved.migrationId }))).toMatchObject({ valid: true, code: 'VALID' });
    expect(expectOk(await call(imported, 'keys.verifyKey', { key: moved.key }))).toMatchObject({ valid: true, code: 'VALID' });
    await imported.stop();
  }, 60_000);

  it('rebuilds the index entries: every record table and the indexes are the source’s, byte for byte', async () => {
    const target = tempDir();
    expect((await cli(['import', file(exported)], target)).code).toBe(0);
    // apis is left out: the source still holds its deleted API's record.
    const tables = ['workspaces', 'root_keys', 'root_key_hashes', 'keys', 'key_records', 'api_keys', 'permissions', 'roles', 'identities', 'ratelimit_namespaces', 'ratelimit_overrides', 'indexes'];
    const [from, to] = await Promise.all([dumpTables(source.dataDir, tables), dumpTables(target, tables)]);
    expect(Object.keys(to)).toEqual(tables);
    for (const table of tables) expect(to[table], table).toBe(from[table]);
  });

  it('twice: the second time every record is skipped', async () => {
    const target = tempDir();
    const at = file(exported);
    expect((await cli(['import', at], target)).code).toBe(0);
    const again = await cli(['import', at], target);
    expect(again.code, again.stderr).toBe(0);
    const total = Object.values(parse(exported).at(-1)?.counts ?? {}).reduce((a, b) => a + b, 0) - (parse(exported).at(-1)?.counts?.credits ?? 0);
    expect(again.json.skipped).toBe(total);
    expect(Object.values(again.json.imported as Record<string, number>).every((n) => n === 0)).toBe(true);
    expect(await exportOf(target)).toBe(exported);
  });

  it.each([
    ['garbage', () => 'this is not json\n', /is not a keyward export/],
    ['an empty file', () => '', /is empty, not a keyward export/],
    ['another format', () => '{"type":"keyward-backup","version":1}\n', /is not a keyward export/],
    ['a newer version', () => exported.replace('"version":1', '"version":2'), /version 2; this keyward reads version 1/],
    ['a line that does not parse', () => exported.replace('{"type":"key",', '{"type":"key"'), /line \d+: does not parse as JSON/],
    ['a record of the wrong shape', () => exported.replace(/"byteLength":\d+/, '"byteLength":"16"'), /line \d+: the key record field byteLength must be a whole number/],
    ['an unknown type', () => exported.replace('{"type":"role",', '{"type":"rolle",'), /unknown type "rolle"/],
    ['records out of order', () => moveOverrideToTheEnd(exported), /line \d+: a ratelimit_override after the key records/],
    ['a file cut short', () => exported.slice(0, exported.lastIndexOf('{"type":"end"')), /ends without its end line/],
    ['the same record twice', () => duplicateFirstKey(exported), /is on line \d+ too/],
    ['a key of an API that is nowhere', () => exported.replace(/"apiId":"api_\w+"/, '"apiId":"api_nowhere"'), /api api_nowhere .* is neither in the file nor in the store/],
    ['a key of an identity that is nowhere', () => editKey(exported, (k) => k.identityId !== undefined, (k) => (k.identityId = 'id_nowhere')), /identity id_nowhere .* is neither in the file nor in the store/],
    ["a key whose externalId is not its identity's", () => editKey(exported, (k) => k.identityId !== undefined, (k) => (k.externalId = 'someone_else')), /externalId "someone_else" is not its identity's/],
    ['a key with an externalId but no identity', () => editKey(exported, (k) => k.identityId !== undefined, (k) => delete k.identityId), /has an externalId but no identityId/],
    ['a key with a role that is nowhere', () => editKey(exported, (k) => Array.isArray(k.roleIds), (k) => (k.roleIds = ['role_nowhere'])), /role role_nowhere .* is neither in the file nor in the store/],
    ['a key with a permission that is nowhere', () => editKey(exported, (k) => Array.isArray(k.permissions), (k) => (k.permissions = ['never.created'])), /permission "never.created" .* is neither in the file nor in the store/],
    ['a rate limit of a negative duration', () => editKey(exported, (k) => Array.isArray(k.ratelimits) && k.ratelimits.length > 0, (k) => ((k.ratelimits as Data[])[0] = { ...(k.ratelimits as Data[])[0], durationMs: -5 })), /field ratelimits must be .*durationMs \(1000 or more\)/],
    ['a byteLength out of range', () => exported.replace(/"byteLength":\d+/, '"byteLength":-3'), /field byteLength must be a whole number from 16 to 255/],
  ])('refuses %s with exit 1, writing nothing', async (_what, content, message) => {
    const target = tempDir();
    const res = await cli(['import', file(content())], target);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(message);
    expect(res.stdout).toBe('');
    // Nothing was written: the data dir exports as an empty store, or has none at all.
    const after = await cli(['export'], target);
    expect(after.code === 1 ? after.stderr : after.stdout).toMatch(/there is no store|"counts":\{"workspaces":0,/);
  });

  it('refuses a record the store holds with other content, writing nothing of the file', async () => {
    // The target holds the second workspace's records only; the file is the full export with
    // that workspace's API renamed: the first workspace's records, new to the target, stay out too.
    const target = tempDir();
    const only = await exportOf(source.dataDir, ['--workspace', otherWorkspace]);
    expect((await cli(['import', file(only)], target)).code).toBe(0);
    const otherApi = parse(only).find((l) => l.type === 'api')?.record?.id ?? '';
    const changed = exported.replace(new RegExp(`"id":"${otherApi}","workspaceId":"${otherWorkspace}","name":"other"`), `"id":"${otherApi}","workspaceId":"${otherWorkspace}","name":"renamed"`);
    expect(changed).not.toBe(exported);
    const res = await cli(['import', file(changed)], target);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`api ${otherApi} is in the store with other content`);
    expect(await exportOf(target)).toBe(only.replace(`,"workspaceId":"${otherWorkspace}"}`, '}'));
    // A root key whose hash another root key holds in the store.
    const rootKey = parse(only).find((l) => l.type === 'root_key')?.record?.id ?? '';
    const stolen = only.replace(`"id":"${rootKey}"`, '"id":"rk_someoneelse"');
    const taken = await cli(['import', file(stolen)], target);
    expect(taken.code).toBe(1);
    expect(taken.stderr).toMatch(/root key hash .* is taken in the store \(by rk_/);
  });

  it('needs <file>, and takes nothing else', async () => {
    expect((await cli(['import'], tempDir())).code).toBe(2);
    expect((await cli(['import', 'a', 'b'], tempDir())).code).toBe(2);
    expect((await cli(['export', 'extra'], tempDir())).code).toBe(2);
    const missing = await cli(['import', '/nonexistent/export.jsonl'], tempDir());
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('/nonexistent/export.jsonl does not exist');
    const dir = tempDir();
    const directory = await cli(['import', dir], tempDir());
    expect(directory.code).toBe(1);
    expect(directory.stderr).toContain(`${dir} is not a file`);
  });
});

describe('cluster mode', () => {
  let pg: ThrowawayPostgres | undefined;
  afterAll(() => pg?.stop());

  it('import writes through PostgreSQL: a node answers as the source did; export reads a replica brought up to date', async () => {
    pg = await startPostgres();
    const env = { KEYWARD_POSTGRES_URL: pg.url };
    const node = await startServer({ rootKey: randomRootKey(), env: { ...env, KEYWARD_NODE_ID: 'import-0' } });
    const expected = await answers(source);
    const res = await cli(['import', file(exported)], tempDir(), env);
    expect(res.code, res.stderr).toBe(0);
    expect(res.json.imported.keys).toBe(8);
    expect(await answers({ url: node.url, rootKey: source.rootKey })).toEqual(expected);
    // Exported from another node's replica (brought up to date first): the same workspace's lines.
    expect(await exportOf(tempDir(), ['--workspace', otherWorkspace], env)).toBe(await exportOf(source.dataDir, ['--workspace', otherWorkspace]));
  }, 120_000);
});

/** The tables' entries as stored (base64 of native rangePacked), read by a process of its own (one store per process). */
async function dumpTables(dataDir: string, tables: string[]): Promise<Record<string, string>> {
  const script = `
    const { native } = await import(${JSON.stringify(pathToFileURL(path.join(ROOT, 'dist', 'src', 'engine', 'native.js')).href)});
    native.open(process.env.KEYWARD_DATA_DIR, false, 0, 64 << 20);
    const out = {};
    for (const t of ${JSON.stringify(tables)}) out[t] = native.rangePacked(t, Buffer.alloc(0), null, 1e6).toString('base64');
    native.close();
    process.stdout.write(JSON.stringify(out));`;
  const res = await runNode(['--input-type=module', '-e', script], dataDir);
  expect(res.code, res.stderr).toBe(0);
  return JSON.parse(res.stdout) as Record<string, string>;
}

/** The export with the first key record that `which` picks changed by `edit` (the line otherwise as it was). */
function editKey(text: string, which: (record: Data) => boolean, edit: (record: Data) => unknown): string {
  const lines = text.trimEnd().split('\n');
  const at = lines.findIndex((l) => l.startsWith('{"type":"key",') && which((JSON.parse(l) as Line).record ?? {}));
  expect(at).toBeGreaterThan(0);
  const line = JSON.parse(lines[at] ?? '') as Line;
  edit(line.record ?? {});
  lines[at] = JSON.stringify(line);
  return lines.join('\n') + '\n';
}

/** The export with an override's line (which no key names) moved after the keys. */
function moveOverrideToTheEnd(text: string): string {
  const lines = text.trimEnd().split('\n');
  const [override] = lines.splice(lines.findIndex((l) => l.startsWith('{"type":"ratelimit_override",')), 1);
  lines.splice(lines.length - 1, 0, override ?? '');
  return lines.join('\n') + '\n';
}

/** The export with its first key line twice (the end line's counts adjusted, so the duplicate is what is refused). */
function duplicateFirstKey(text: string): string {
  const lines = text.trimEnd().split('\n');
  const at = lines.findIndex((l) => l.startsWith('{"type":"key",'));
  const key = lines[at] ?? '';
  lines.splice(at, 0, key);
  const end = JSON.parse(lines.at(-1) ?? '{}') as { counts: Record<string, number> };
  end.counts.keys = (end.counts.keys ?? 0) + 1;
  if (key.includes('"credits":')) end.counts.credits = (end.counts.credits ?? 0) + 1;
  lines[lines.length - 1] = JSON.stringify(end);
  return lines.join('\n') + '\n';
}
