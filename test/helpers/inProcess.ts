// In-process requests: a procedure call goes through the server's own dispatcher (auth, JSON
// parsing, ajv, permission rules, handler, envelope), store and engine, without a socket or
// a child process. For the procedure suites (test/procedures); the transport (405, 413, 415,
// headers, keep-alive), the official SDKs and crash tests stay on live servers (server.ts).
//
// A reply settles on a later event-loop turn, as one over a socket does, so a loop of awaited
// calls leaves timers, I/O and another loop of calls their turns. Background jobs (API
// purges, unlinkings) run on this thread between requests rather than on the worker pool
// (apis.deleteApi's cascade suite covers the pool on a live server).
//
// `const srv = inProcessServer()` then `srv()` inside tests, like liveServer(): the helpers
// of server.ts (call, rootKeyWith, foreignRootKey, createApi, …) take either. One per test
// file: the native module opens one store per process (vitest runs each file in a process
// of its own).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { openThread, type ServingThread } from '../../src/serve.js';
import { bootstrap } from '../../src/bootstrap.js';
import { createRootKey, createWorkspace } from '../../src/store/rootKeys.js';
import { direct } from '../../src/store/db.js';
import { randomRootKey, type CallResult } from './server.js';

export interface InProcessServer {
  /** Base of the error `type` URLs in replies; nothing listens there. */
  readonly url: string;
  readonly rootKey: string;
  readonly dataDir: string;
  /** The bootstrap workspace. */
  readonly workspaceId: string;
  /** POST /v2/{procedure} with a JSON body, answered once the reply may leave (durability). */
  request(procedure: string, body: Uint8Array, authorization: string | undefined): Promise<CallResult>;
  /** A root key with these grants, in `workspaceId` (default: the bootstrap one). */
  rootKeyWith(permissions: readonly string[], workspaceId?: string): { key: string; rootKeyId: string; workspaceId: string };
  /** A new, empty workspace. */
  newWorkspace(): string;
}

const URL_BASE = 'http://in-process.keyward.test';

/** `dataDir`: a directory of the caller's (kept when the tests end); by default a temporary one. */
export function inProcessServer(opts: { env?: Record<string, string>; dataDir?: string } = {}): () => InProcessServer {
  let server: InProcessServer | undefined;
  let dir = '';
  let thread: ServingThread | undefined;
  beforeAll(() => {
    dir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'keyward-inproc-'));
    const rootKey = randomRootKey();
    const config = loadConfig({ KEYWARD_DATA_DIR: dir, KEYWARD_ROOT_KEY: rootKey, KEYWARD_PUBLIC_URL: URL_BASE, KEYWARD_LOG_LEVEL: 'silent', KEYWARD_MAP_BYTES: String(16 * 1024 * 1024), ...opts.env });
    const t = openThread(config);
    thread = t;
    const boot = direct.transact(() => bootstrap(rootKey, Date.now()));
    if (typeof boot !== 'object') throw new Error(`bootstrap of a fresh store answered ${boot}`);
    const workspaceId = boot.workspaceId;
    server = {
      url: URL_BASE,
      rootKey,
      dataDir: dir,
      workspaceId,
      request: (procedure, body, authorization) => t.request(procedure, body, authorization).then(toCallResult),
      rootKeyWith(permissions, ws = workspaceId) {
        const { record, key } = direct.transact(() => createRootKey(ws, permissions, Date.now()));
        return { key, rootKeyId: record.id, workspaceId: ws };
      },
      newWorkspace: () => direct.transact(() => createWorkspace(Date.now())).id,
    };
  });
  afterAll(async () => {
    await thread?.close();
    if (opts.dataDir === undefined) rmSync(dir, { recursive: true, force: true });
  });
  return () => {
    if (server === undefined) throw new Error('in-process server not started');
    return server;
  };
}

function toCallResult(reply: { status: number; body: string; headers: Record<string, string> | undefined }): CallResult {
  let json: unknown;
  try {
    json = JSON.parse(reply.body);
  } catch {
    json = undefined;
  }
  // Only the headers the dispatcher set (e.g. Allow); Content-Type is written by http/uws.ts,
  // so a test of it must run on a live server rather than pass here on a made-up value.
  const headers = new Headers(reply.headers);
  return { status: reply.status, headers, text: reply.body, json };
}
