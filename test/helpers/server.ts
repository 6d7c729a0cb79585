// Live-server helpers: spawn the built daemon (dist/src/main.js) on a free port with a fresh
// data dir and a random bootstrap root key, call procedures over real HTTP, run the CLI.
// Every spawned server is killed and every temp dir removed by `stopAll` (call it in afterAll).
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const ROOT = path.resolve(fileURLToPath(new URL('../..', import.meta.url)));
const MAIN = path.join(ROOT, 'dist', 'src', 'main.js');
const BIN = path.join(ROOT, 'bin', 'keyward.mjs');
export const CLI_JS = path.join(ROOT, 'dist', 'src', 'cli.js');
// bin/keyward.mjs first runs scripts/setup.mjs (npm ci / cargo / tsc when anything looks
// stale), which is slow and, mid-development, can reinstall node_modules under the test run.
// By default the CLI is run the way bin/keyward.mjs runs it once set-up is done (runCli from
// dist/src/cli.js); KEYWARD_TEST_REAL_BIN=1 runs bin/keyward.mjs itself.
const CLI_ARGS = process.env.KEYWARD_TEST_REAL_BIN === '1'
  ? [BIN]
  : ['--input-type=module', '-e', `const { runCli } = await import(${JSON.stringify(pathToFileURL(CLI_JS).href)}); await runCli(process.argv.slice(1));`];
const START_TIMEOUT_MS = 20_000;

export interface Server {
  url: string;
  port: number;
  rootKey: string;
  dataDir: string;
  /** What the server was started with beyond the defaults (a cluster node's KEYWARD_POSTGRES_URL). */
  env: Record<string, string>;
  child: ChildProcess;
  /** Output captured so far (for failure messages). */
  output(): { stdout: string; stderr: string };
  /** Sends `signal` (default SIGTERM) and resolves with the exit code (null if killed by a signal). */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

const children = new Set<ChildProcess>();
const tempDirs = new Set<string>();

export function tempDir(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'keyward-test-'));
  tempDirs.add(dir);
  return dir;
}

export function randomRootKey(): string {
  return `kwtest_${randomBytes(18).toString('hex')}`;
}

/** `prlimitNofile`: the server runs under that soft and hard limit of open descriptors (prlimit(1)). */
export async function startServer(opts: { env?: Record<string, string>; dataDir?: string; rootKey?: string; prlimitNofile?: number } = {}): Promise<Server> {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: build first (node_modules/.bin/tsc -p .)`);
  const dataDir = opts.dataDir ?? tempDir();
  const rootKey = opts.rootKey ?? opts.env?.KEYWARD_ROOT_KEY ?? randomRootKey();
  const env = opts.env ?? {};
  const nofile = opts.prlimitNofile;
  if (env.KEYWARD_PORT !== undefined || Number(env.KEYWARD_THREADS ?? '1') <= 1) return spawnServer(dataDir, rootKey, env, nofile);
  // Several serving threads share one fixed port (KEYWARD_PORT=0 is refused with them): a
  // random one, and another when the server finds it taken: by its probe before binding, or
  // by the bind itself (a port free at the probe can be taken before the bind, e.g. as the
  // ephemeral port of a connection some other test opens meanwhile).
  // Below Linux's default ephemeral range (32768–60999), where outgoing connections take theirs.
  for (let attempt = 1; ; attempt++) {
    const port = String(20_000 + randomInt(12_000));
    try {
      return await spawnServer(dataDir, rootKey, { ...env, KEYWARD_PORT: port }, nofile);
    } catch (err) {
      if (attempt >= 5 || !/the port is in use|: in use, or not a local address/.test((err as Error).message)) throw err;
    }
  }
}

/**
 * The server picks its own port (KEYWARD_PORT=0, read back from its listening line): a port
 * probed free here could be taken by another test file's server before this one binds, and
 * two servers sharing a port (uWS binds with SO_REUSEPORT) would split the requests.
 */
function spawnServer(dataDir: string, rootKey: string, env: Record<string, string>, nofile?: number): Promise<Server> {
  // prlimit execs node, so the child's pid is the server's.
  const [command, args] = nofile === undefined ? [process.execPath, [MAIN]] : ['prlimit', [`--nofile=${nofile}:${nofile}`, '--', process.execPath, MAIN]];
  const child = spawn(command, args, {
    cwd: ROOT,
    env: {
      ...process.env,
      KEYWARD_HOST: '127.0.0.1',
      KEYWARD_PORT: '0',
      KEYWARD_DATA_DIR: dataDir,
      KEYWARD_ROOT_KEY: rootKey,
      KEYWARD_LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => {
    children.delete(child);
    resolve(code);
  }));

  return new Promise<Server>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`keyward did not print its listening line within ${START_TIMEOUT_MS} ms.\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, START_TIMEOUT_MS);
    const onData = (): void => {
      const m = /keyward listening on (http:\/\/\S+)/.exec(stdout);
      if (m === null || m[1] === undefined) return;
      clearTimeout(timer);
      child.stdout?.off('data', onData);
      const url = m[1];
      resolve({
        url,
        port: Number(new URL(url).port),
        rootKey,
        dataDir,
        env,
        child,
        output: () => ({ stdout, stderr }),
        stop: async (signal: NodeJS.Signals = 'SIGTERM') => {
          if (child.exitCode === null && child.signalCode === null) child.kill(signal);
          return exited;
        },
      });
    };
    child.stdout?.on('data', onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`keyward exited early with code ${String(code)}.\nstdout: ${stdout}\nstderr: ${stderr}`));
    });
  });
}

/** Kills every server still running and removes every temp dir. */
export async function stopAll(): Promise<void> {
  await Promise.all([...children].map((c) => new Promise<void>((resolve) => {
    if (c.exitCode !== null || c.signalCode !== null) return resolve();
    c.once('exit', () => resolve());
    c.kill('SIGKILL');
  })));
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
  tempDirs.clear();
}

process.once('exit', () => {
  for (const c of children) c.kill('SIGKILL');
});

export interface CallResult {
  status: number;
  headers: Headers;
  text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json: any;
}

export interface CallOptions {
  /** Root key to send as `Bearer <rootKey>`; null sends no Authorization header. Default: the server's. */
  rootKey?: string | null;
  headers?: Record<string, string>;
  method?: string;
  /** Sent as-is instead of JSON.stringify(body). */
  rawBody?: string | Uint8Array;
}

/**
 * A server the helpers below reach without a socket (inProcess.ts): they take either kind.
 * Recognised by shape, so that this file, which every live suite imports, does not load the
 * store and engine.
 */
export interface InProcessLike {
  /** The bootstrap workspace. */
  readonly workspaceId: string;
  request(procedure: string, body: Uint8Array, authorization: string | undefined): Promise<CallResult>;
  rootKeyWith(permissions: readonly string[], workspaceId?: string): { key: string; rootKeyId: string; workspaceId: string };
  newWorkspace(): string;
}

export function inProcess(server: object): InProcessLike | undefined {
  return 'request' in server && typeof server.request === 'function' ? (server as InProcessLike) : undefined;
}

export async function call(server: Pick<Server, 'url' | 'rootKey'>, procedure: string, body: unknown, opts: CallOptions = {}): Promise<CallResult> {
  const headers: Record<string, string> = { 'Content-Type': 'application/json' };
  const rootKey = opts.rootKey === undefined ? server.rootKey : opts.rootKey;
  const local = inProcess(server);
  if (local !== undefined) {
    // Only what reaches the dispatcher: a POST with a JSON body (transport checks are uws.ts's).
    if ((opts.method ?? 'POST') !== 'POST' || opts.headers !== undefined) throw new Error('in-process calls are POSTs with the default headers; test the transport on a live server');
    const raw = opts.rawBody;
    const bytes = raw === undefined ? Buffer.from(JSON.stringify(body)) : typeof raw === 'string' ? Buffer.from(raw) : raw;
    return local.request(procedure, bytes, rootKey === null ? undefined : `Bearer ${rootKey}`);
  }
  if (rootKey !== null) headers.Authorization = `Bearer ${rootKey}`;
  Object.assign(headers, opts.headers ?? {});
  for (const [k, v] of Object.entries(headers)) if (v === '') delete headers[k];
  const method = opts.method ?? 'POST';
  const raw = opts.rawBody;
  const payload: string | Blob | undefined = method === 'GET' || method === 'HEAD' ? undefined : typeof raw === 'string' ? raw : raw !== undefined ? new Blob([new Uint8Array(raw)]) : JSON.stringify(body);
  const res = await fetch(`${server.url}/v2/${procedure}`, { method, headers, body: payload });
  return parseResponse(res);
}

export async function get(server: Pick<Server, 'url'>, pathname: string): Promise<CallResult> {
  return parseResponse(await fetch(`${server.url}${pathname}`));
}

async function parseResponse(res: Response): Promise<CallResult> {
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json?: any;
}

/** Runs node with `args` in the checkout against `dataDir`; resolves with its exit code and output. */
export function runNode(args: string[], dataDir: string, env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, {
      cwd: ROOT,
      env: { ...process.env, KEYWARD_DATA_DIR: dataDir, KEYWARD_LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Runs `keyward <args>` against `dataDir` (with `env` added to the environment). */
export async function cli(args: string[], dataDir: string, env: Record<string, string> = {}): Promise<CliResult> {
  const { code, stdout, stderr } = await runNode([...CLI_ARGS, ...args], dataDir, env);
  let json: unknown;
  try {
    json = JSON.parse(stdout);
  } catch {
    json = undefined;
  }
  return { code, stdout, stderr, json };
}

/** A cluster node's KEYWARD_POSTGRES_URL, for the CLI to work on its cluster; nothing for one node. */
function clusterEnv(server: object): Record<string, string> {
  const url = 'env' in server ? (server.env as Record<string, string>).KEYWARD_POSTGRES_URL : undefined;
  return url === undefined ? {} : { KEYWARD_POSTGRES_URL: url };
}

/** The bootstrap workspace of a fresh data dir (the only one there). */
export async function bootstrapWorkspace(dataDir: string, env: Record<string, string> = {}): Promise<string> {
  const res = await cli(['root-keys', 'list'], dataDir, env);
  if (res.code !== 0) throw new Error(`root-keys list failed: ${res.stderr}`);
  const first = (res.json as { workspaceId: string }[])[0];
  if (first === undefined) throw new Error('no root key in the data dir');
  return first.workspaceId;
}

/** A new root key (via the CLI) with these grants, in `workspaceId` (default: the bootstrap one). */
export async function rootKeyWith(server: Pick<Server, 'dataDir'>, permissions: string[], workspaceId?: string): Promise<{ key: string; rootKeyId: string; workspaceId: string }> {
  const local = inProcess(server);
  if (local !== undefined) return local.rootKeyWith(permissions, workspaceId);
  const ws = workspaceId ?? (await bootstrapWorkspace(server.dataDir, clusterEnv(server)));
  const res = await cli(['root-keys', 'create', '--workspace', ws, ...permissions.flatMap((p) => ['--permission', p])], server.dataDir, clusterEnv(server));
  if (res.code !== 0) throw new Error(`root-keys create failed (${String(res.code)}): ${res.stderr}`);
  return res.json as { key: string; rootKeyId: string; workspaceId: string };
}

/** A second workspace with a `*` root key: sees nothing of the first. */
export async function foreignRootKey(server: Pick<Server, 'dataDir'>): Promise<string> {
  const local = inProcess(server);
  if (local !== undefined) return local.rootKeyWith(['*'], local.newWorkspace()).key;
  const ws = await cli(['workspaces', 'create'], server.dataDir, clusterEnv(server));
  if (ws.code !== 0) throw new Error(`workspaces create failed: ${ws.stderr}`);
  return (await rootKeyWith(server, ['*'], (ws.json as { workspaceId: string }).workspaceId)).key;
}

export async function createApi(server: Pick<Server, 'url' | 'rootKey'>, name = `api-${randomBytes(4).toString('hex')}`): Promise<string> {
  const res = await call(server, 'apis.createApi', { name });
  if (res.status !== 200) throw new Error(`createApi failed: ${res.status} ${res.text}`);
  return (res.json as { data: { apiId: string } }).data.apiId;
}

export const REQUEST_ID = /^req_[A-Za-z0-9]+$/;

/** Asserts the error envelope shape and returns `error`. */
export function expectError(res: CallResult, status: number, name?: string): { title: string; detail: string; status: number; type: string; errors?: { location: string; message: string; fix?: string }[] } {
  const problems: string[] = [];
  if (res.status !== status) problems.push(`HTTP ${res.status}, wanted ${status}`);
  const body = res.json as { meta?: { requestId?: unknown }; error?: Record<string, unknown>; data?: unknown } | undefined;
  if (body === undefined) problems.push('body is not JSON');
  else {
    if (typeof body.meta?.requestId !== 'string' || !REQUEST_ID.test(body.meta.requestId)) problems.push('meta.requestId missing or malformed');
    if (body.data !== undefined) problems.push('error envelope carries data');
    const e = body.error;
    if (e === undefined) problems.push('no error object');
    else {
      if (typeof e.title !== 'string' || typeof e.detail !== 'string' || typeof e.type !== 'string') problems.push('title/detail/type not strings');
      if (e.status !== status) problems.push(`error.status ${String(e.status)}`);
      if (status === 400 && !Array.isArray(e.errors)) problems.push('400 without errors array');
      if (name !== undefined && !(typeof e.type === 'string' && e.type.endsWith(`/${name}`))) problems.push(`type ${String(e.type)} does not end with /${name}`);
    }
  }
  if (problems.length > 0) throw new Error(`${problems.join('; ')}\nresponse: ${res.status} ${res.text.slice(0, 500)}`);
  return (body as { error: ReturnType<typeof expectError> }).error;
}

/** Asserts the success envelope and returns `data`. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function expectOk(res: CallResult): any {
  const body = res.json as { meta?: { requestId?: unknown }; data?: unknown; error?: unknown } | undefined;
  if (res.status !== 200 || body === undefined || body.error !== undefined || body.data === undefined || typeof body.meta?.requestId !== 'string' || !REQUEST_ID.test(body.meta.requestId)) {
    throw new Error(`expected a success envelope, got ${res.status} ${res.text.slice(0, 500)}`);
  }
  return body.data;
}
