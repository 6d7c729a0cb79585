// Helpers for the ratelimits.* procedure tests (live or in-process server).
import { randomBytes } from 'node:crypto';
import { bootstrapWorkspace, call, expectError, expectOk, inProcess, rootKeyWith, type Server } from './server.js';

/** What these helpers use of a server: a live one (server.ts) or an in-process one (inProcess.ts). */
type Srv = Pick<Server, 'url' | 'rootKey' | 'dataDir'>;

export const MIN = 60_000;
export const HOUR = 60 * MIN;
/**
 * The longest window ratelimits.limit takes (30 days). Its buckets are aligned to the epoch like
 * every window's, but a test spanning a few seconds (CLI spawns, restarts) crosses a bucket
 * boundary only with probability ~1e-6, where an hourly window's exact counts would be off by
 * one in ~1 of 1,000 runs (the previous bucket weighs floor(n · (1 − elapsed/duration))).
 */
export const LONG_WINDOW = 2_592_000_000;

export function uniq(prefix = 'ns'): string {
  return `${prefix}-${randomBytes(5).toString('hex')}`;
}

export interface LimitData {
  success: boolean;
  limit: number;
  remaining: number;
  reset: number;
  overrideId?: string;
}

/** ratelimits.limit → data (asserts a 200 envelope). */
export async function limitOk(s: Srv, body: Record<string, unknown>, procedure = 'ratelimits.limit', rootKey?: string): Promise<LimitData> {
  return expectOk(await call(s, procedure, body, rootKey === undefined ? {} : { rootKey })) as LimitData;
}

/** Creates the namespace (first limit call, cost 0) and returns its name. */
export async function createNamespace(s: Srv, name = uniq()): Promise<string> {
  await limitOk(s, { namespace: name, identifier: '__create__', limit: 1, duration: 1_000, cost: 0 });
  return name;
}

const probeKeys = new Map<string, Promise<string>>();
const workspaces = new Map<string, Promise<string>>();

/** A root key (via the CLI, or straight into an in-process server's store) with these grants in the bootstrap workspace (looked up once per data dir). */
export async function keyWith(s: Srv, permissions: string[]): Promise<string> {
  if (inProcess(s) !== undefined) return (await rootKeyWith(s, permissions)).key;
  let ws = workspaces.get(s.dataDir);
  if (ws === undefined) workspaces.set(s.dataDir, (ws = bootstrapWorkspace(s.dataDir)));
  return (await rootKeyWith(s, permissions, await ws)).key;
}

/**
 * The `rlns_` id of an existing namespace. No response carries it, but a 403 names the
 * permission on the namespace's id (`ratelimits.<namespaceId>.read_override`), so a root
 * key without any ratelimits grant reveals it.
 */
export async function namespaceIdOf(s: Srv, name: string): Promise<string> {
  let probeKey = probeKeys.get(s.dataDir);
  if (probeKey === undefined) probeKeys.set(s.dataDir, (probeKey = keyWith(s, ['apis.*.read_api'])));
  const error = expectError(await call(s, 'ratelimits.getOverride', { namespace: name, identifier: 'x' }, { rootKey: await probeKey }), 403, 'insufficient_permissions');
  const m = /ratelimits\.(rlns_[A-Za-z0-9]+)\.read_override/.exec(error.detail);
  if (m === null || m[1] === undefined) throw new Error(`no namespace id in: ${error.detail}`);
  return m[1];
}
