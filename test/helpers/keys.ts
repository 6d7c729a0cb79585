// Helpers for the keys.* procedure tests: make keys and roles over HTTP, make many root keys
// with one CLI process (or, for an in-process server, in the test's own store), decode base58
// key material.
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect } from 'vitest';
import { call, createApi, expectError, expectOk, inProcess, ROOT, runNode, type CallResult, type Server } from './server.js';

type Srv = Pick<Server, 'url' | 'rootKey'>;

export const BASE58_ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
export const BASE58_RE = /^[1-9A-HJ-NP-Za-km-z]+$/;

/** Bytes of a base58 string (leading '1's are zero bytes). */
export function base58Decode(text: string): Uint8Array {
  let n = 0n;
  for (const ch of text) {
    const d = BASE58_ALPHABET.indexOf(ch);
    if (d < 0) throw new Error(`not base58: ${ch}`);
    n = n * 58n + BigInt(d);
  }
  const bytes: number[] = [];
  while (n > 0n) {
    bytes.unshift(Number(n % 256n));
    n /= 256n;
  }
  let zeros = 0;
  while (text[zeros] === '1') zeros++;
  return new Uint8Array([...new Array<number>(zeros).fill(0), ...bytes]);
}

export const uniq = (what = 'x'): string => `${what}_${randomBytes(5).toString('hex')}`;

export interface NewKey {
  keyId: string;
  key: string;
  apiId: string;
}

/** keys.createKey (with a fresh API unless body.apiId is given); fails the test on non-200. */
export async function newKey(server: Srv, body: Record<string, unknown> = {}): Promise<NewKey> {
  const apiId = (body.apiId as string | undefined) ?? (await createApi(server));
  const data = expectOk(await call(server, 'keys.createKey', { ...body, apiId })) as { keyId: string; key: string };
  return { ...data, apiId };
}

/** permissions.createRole; returns the role name. */
export async function newRole(server: Srv, permissions: string[] = [], name = uniq('role')): Promise<string> {
  expectOk(await call(server, 'permissions.createRole', { name, permissions }));
  return name;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function getKey(server: Srv, keyId: string, extra: Record<string, unknown> = {}): Promise<any> {
  return expectOk(await call(server, 'keys.getKey', { keyId, ...extra }));
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function verify(server: Srv, key: string, extra: Record<string, unknown> = {}): Promise<any> {
  return expectOk(await call(server, 'keys.verifyKey', { key, ...extra }));
}

/** Asserts a 400 whose errors[] mentions `field` somewhere (location or message). */
export function expect400(res: CallResult, field?: string): void {
  const error = expectError(res, 400);
  if (field !== undefined) expect(JSON.stringify(error)).toContain(field);
}

const CLI_JS = pathToFileURL(path.join(ROOT, 'dist', 'src', 'cli.js')).href;

// One node process runs the CLI's `main` once per root key (each run opens and closes the
// store as `keyward root-keys create` does), so a file needing N root keys pays one spawn.
const BATCH_SCRIPT = `
const { main } = await import(${JSON.stringify(CLI_JS)});
const spec = JSON.parse(process.argv[1]);
const write = process.stdout.write.bind(process.stdout);
async function run(argv) {
  let out = '';
  process.stdout.write = (s) => { out += s; return true; };
  let code;
  try { code = await main(argv); } finally { process.stdout.write = write; }
  if (code !== 0) throw new Error('keyward ' + argv.join(' ') + ' exited ' + code);
  return JSON.parse(out);
}
let ws = spec.workspace;
if (ws === undefined) ws = spec.newWorkspace ? (await run(['workspaces', 'create'])).workspaceId : (await run(['root-keys', 'list']))[0].workspaceId;
const keys = [];
for (const grants of spec.grants) keys.push((await run(['root-keys', 'create', '--workspace', ws, ...grants.flatMap((g) => ['--permission', g])])).key);
write(JSON.stringify({ workspaceId: ws, keys }));
process.exit(0);
`;

/**
 * Root keys with these grant lists (one key per list), made by the CLI in one process, in the
 * bootstrap workspace, or in a new workspace when `newWorkspace` is set.
 */
export async function rootKeys(server: Pick<Server, 'dataDir'>, grants: string[][], opts: { newWorkspace?: boolean; workspace?: string } = {}): Promise<{ workspaceId: string; keys: string[] }> {
  const local = inProcess(server);
  if (local !== undefined) {
    const workspaceId = opts.workspace ?? (opts.newWorkspace === true ? local.newWorkspace() : local.workspaceId);
    return { workspaceId, keys: grants.map((g) => local.rootKeyWith(g, workspaceId).key) };
  }
  const { code, stdout, stderr } = await runNode(['--input-type=module', '-e', BATCH_SCRIPT, JSON.stringify({ grants, ...opts })], server.dataDir);
  if (code !== 0) throw new Error(`root key batch failed (${String(code)}): ${stderr}`);
  return JSON.parse(stdout) as { workspaceId: string; keys: string[] };
}

/** A `*` root key of a brand-new workspace. */
export async function foreignStarKey(server: Pick<Server, 'dataDir'>): Promise<string> {
  const { keys } = await rootKeys(server, [['*']], { newWorkspace: true });
  return keys[0] as string;
}

/** Expects 403 insufficient_permissions whose detail names `missing`. */
export function expect403(res: CallResult, missing?: string): void {
  const error = expectError(res, 403, 'insufficient_permissions');
  expect(error.title).toBe('Forbidden');
  if (missing !== undefined) expect(error.detail).toContain(missing);
}

const NATIVE_JS = pathToFileURL(path.join(ROOT, 'dist', 'src', 'engine', 'native.js')).href;
const CONFIG_JS = pathToFileURL(path.join(ROOT, 'dist', 'src', 'config.js')).href;

/**
 * Writes credits records straight into the store of a running server (LMDB is multi-process
 * safe, as the CLI relies on), to put a refill boundary in the past:
 * [keyId, remaining, refillAmount (−1 none), refillDay (0 daily), lastRefillAtMs].
 */
export async function setCreditsDirect(server: Pick<Server, 'dataDir'>, rows: [string, number, number, number, number][]): Promise<void> {
  const script = `
const { native } = await import(${JSON.stringify(NATIVE_JS)});
const { loadConfig } = await import(${JSON.stringify(CONFIG_JS)});
const config = loadConfig();
native.open(config.dataDir, false, 0, config.initialMapBytes);
const rows = JSON.parse(process.argv[1]);
native.transaction(() => { for (const r of rows) native.creditsSet(...r); });
native.sync();
native.close();
`;
  const { code, stderr } = await runNode(['--input-type=module', '-e', script, JSON.stringify(rows)], server.dataDir);
  if (code !== 0) throw new Error(`setCreditsDirect failed (${String(code)}): ${stderr}`);
}
