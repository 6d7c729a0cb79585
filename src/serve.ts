// One serving thread: its services (durability gate, hot calls, background jobs), the
// dispatcher (schemas compiled once) and a uWS App on the shared port. main.ts runs one on
// the main thread and KEYWARD_THREADS − 1 in worker threads; they share the LMDB environment
// (native module) and the metrics buffer. openThread is the same thread without a socket.
import { existsSync, readFileSync } from 'node:fs';
import { boundPublicUrl, type Config } from './config.js';
import { DurabilityGate } from './engine/durability.js';
import { HotCalls } from './engine/hotCalls.js';
import { native } from './engine/native.js';
import { commitFailed, procedureNotFound } from './errors/errors.js';
import { watchDataDir } from './errors/space.js';
import { startServer, type RunningServer } from './http/uws.js';
import { createLogger, type Logger } from './log.js';
import { Dispatcher, type DispatchResult, type ThreadServices } from './rpc/dispatch.js';
import type { Reply } from './rpc/envelope.js';
import { successBody } from './rpc/envelope.js';
import { Metrics } from './rpc/metrics.js';
import { openApiDocument } from './rpc/openapi.js';
import { newRequestId } from './rpc/requestId.js';
import { ROUTES } from './rpc/routes.js';
import { gatedWriter, settled } from './store/db.js';
import { clusterMetrics, prepareCluster, startCounting, threadCluster, type ThreadCluster } from './cluster/node.js';
import { PostgresUnavailable } from './cluster/postgres.js';
import { BackgroundJobs } from './workers/jobs.js';
import type { AnalyticsClient } from './analytics/host.js';

// src/serve.ts (vitest) or dist/src/serve.js (built): package.json is one or two levels up.
const packageJson = [new URL('../package.json', import.meta.url), new URL('../../package.json', import.meta.url)].find((u) => existsSync(u));
export const VERSION = packageJson === undefined ? '0.0.0' : (JSON.parse(readFileSync(packageJson, 'utf8')) as { version: string }).version;

export function openStore(config: Config): void {
  native.open(config.dataDir, config.durability === 'disk', config.syncIntervalMs, config.initialMapBytes, config.writeMap);
  native.setVerifyCache(config.verifyCacheSlots);
  watchDataDir(config.dataDir);
}

/** A serving thread's services, and in cluster mode its part of the cluster. */
export interface Thread {
  readonly services: ThreadServices;
  readonly cluster: ThreadCluster | undefined;
}

/**
 * A serving thread's services. `pool`: background jobs run on a worker pool (one node's
 * server); without it, and always in cluster mode (their writes go through PostgreSQL),
 * they run on this thread between its requests. In cluster mode management writes go
 * through the cluster writer; its replica is started by `startCluster`. `analytics`: this
 * thread's client of the analytics worker (none: the analytics procedures answer 412).
 */
export function threadServices(config: Config, log: Logger, pool: boolean, analytics?: AnalyticsClient): Thread {
  const gate = new DurabilityGate(config.durability);
  // Management writes nest in the turn's batch, except under MDB_WRITEMAP (LMDB has no nested transactions there).
  const local = gatedWriter(gate, !config.writeMap);
  const hot = new HotCalls(config.postgresUrl !== undefined);
  const cluster = config.postgresUrl === undefined ? undefined : threadCluster(config, log, gate, local, hot);
  const writer = cluster?.writer ?? settled(local);
  const jobs = new BackgroundJobs(writer, log, pool && cluster === undefined ? config : undefined);
  const catchUp = cluster === undefined ? {} : { catchUp: () => cluster.replica.waitHead() };
  return { services: { gate, writer, hot, jobs, log, vaultKey: config.vaultKey, cluster: cluster?.calls, ...catchUp, ...(analytics === undefined ? {} : { analytics }) }, cluster };
}

/**
 * Cluster mode: the schema made current, then this thread's replica brought up to date and
 * kept so, its part of the leases of credits kept (renewed, given back when quiet) and its
 * windows shared through Redis.
 */
export async function startCluster(cluster: ThreadCluster | undefined): Promise<void> {
  if (cluster === undefined) return;
  try {
    await prepareCluster(cluster);
    await cluster.replica.start();
  } catch (err) {
    // PostgreSQL away: a node with a replica serves from it (docs/cluster.md), one without cannot start.
    if (!(err instanceof PostgresUnavailable) || !cluster.replica.startFromStore()) throw err;
  }
  await startCounting(cluster);
}

/** The main thread allocates regions for `threads`; worker thread `thread` passes `shared`. */
export function newMetrics(threads: number, shared?: SharedArrayBuffer, thread = 0): Metrics {
  return new Metrics(ROUTES.map((r) => r.procedure), shared, thread, threads);
}

/** `descriptorsLimit`: the process's soft limit of open descriptors (main.ts raises it at start). */
export async function serveThread(config: Config, metrics: Metrics, { services, cluster }: Thread, descriptorsLimit: number): Promise<RunningServer> {
  const dispatcher = new Dispatcher(config.publicUrl, services);
  // Written once the public URL is final (below); no request is served before.
  let openapi = '';
  const running = await startServer({
    config,
    dispatcher,
    gate: services.gate,
    metrics,
    log: services.log,
    descriptorsLimit,
    page(path) {
      if (path === '/v2/liveness') return { status: 200, contentType: 'application/json', body: successBody(newRequestId(), { message: 'keyward is alive' }) };
      if (path === '/openapi.json') return { status: 200, contentType: 'application/json', body: openapi };
      if (path === '/metrics') return { status: 200, contentType: 'text/plain; version=0.0.4', body: metrics.render(native.stats()) + (cluster === undefined ? '' : clusterMetrics(cluster, Date.now())) + (services.analytics?.metrics() ?? '') };
      return undefined;
    },
  });
  // Error types and the OpenAPI server name the port actually bound (KEYWARD_PORT=0).
  dispatcher.publicUrl = boundPublicUrl(config, running.port);
  openapi = JSON.stringify(openApiDocument(ROUTES, dispatcher.publicUrl, VERSION));
  return running;
}

/**
 * A serving thread without a socket, for tests: the store opened as the server opens it, and
 * requests through the server's dispatcher, each answered once its durability gate lets the
 * reply leave. Transport concerns (methods, content types, body limits) are http/uws.ts's
 * and are not applied here; background jobs run on this thread, and no sweeper runs.
 */
export interface ServingThread {
  readonly dispatcher: Dispatcher;
  /** POST /v2/{procedure} (an alias such as ratelimit.* included) with these body bytes. */
  request(procedure: string, body: Uint8Array, authorization: string | undefined): Promise<Reply>;
  /** Waits for background work, commits what is open and closes the store. */
  close(): Promise<void>;
}

export function openThread(config: Config): ServingThread {
  openStore(config);
  const { services } = threadServices({ ...config, postgresUrl: undefined }, createLogger(config.logLevel), false);
  const dispatcher = new Dispatcher(config.publicUrl, services);
  return {
    dispatcher,
    request(procedure, body, authorization) {
      const route = dispatcher.lookup(procedure);
      if (route < 0) return Promise.resolve(dispatcher.error(procedureNotFound(`There is no procedure '${procedure}'.`)));
      // Settled on a later turn, as a reply over a socket is: a loop of awaited requests
      // leaves timers and I/O their turns.
      const held = ({ reply, effect }: DispatchResult): Promise<Reply> =>
        new Promise((resolve) => {
          services.gate.hold(effect, {
            send: () => setImmediate(resolve, reply),
            fail: (err) => setImmediate(resolve, dispatcher.error(commitFailed(err))),
          });
        });
      const result = dispatcher.dispatch(route, authorization ?? '', body);
      return result instanceof Promise ? result.then(held) : held(result);
    },
    async close() {
      await services.jobs.drain(10_000);
      services.gate.closeBatch();
      native.close();
    },
  };
}
