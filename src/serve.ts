// One serving thread: the dispatcher (schemas compiled once) and a uWS App on the shared
// port. main.ts runs one on the main thread and KEYWARD_THREADS − 1 in worker threads;
// they share the LMDB environment (native module) and the metrics buffer.
import { existsSync, readFileSync } from 'node:fs';
import { boundPublicUrl, type Config } from './config.js';
import { native } from './engine/native.js';
import { startServer, type RunningServer } from './http/uws.js';
import { createLogger } from './log.js';
import { Dispatcher } from './rpc/dispatch.js';
import { Metrics } from './rpc/metrics.js';
import { openApiDocument } from './rpc/openapi.js';
import { ROUTES } from './rpc/routes.js';
import { successBody } from './rpc/envelope.js';
import { newRequestId } from './rpc/requestId.js';
import { closeBatch, enableGroupCommit, setDurability, whenDurable } from './store/durability.js';
import { configureWorkers, drainWorkers } from './workers/pool.js';
import type { Reply } from './rpc/envelope.js';
import { ApiError } from './errors/apiError.js';

// src/serve.ts (vitest) or dist/src/serve.js (built): package.json is one or two levels up.
const packageJson = [new URL('../package.json', import.meta.url), new URL('../../package.json', import.meta.url)].find((u) => existsSync(u));
export const VERSION = packageJson === undefined ? '0.0.0' : (JSON.parse(readFileSync(packageJson, 'utf8')) as { version: string }).version;

export function openStore(config: Config): void {
  native.open(config.dataDir, config.durability === 'disk', config.syncIntervalMs, config.initialMapBytes, config.writeMap);
  native.setVerifyCache(config.verifyCacheSlots);
  setDurability(config.durability);
  enableGroupCommit();
}

/** The main thread allocates regions for `threads`; worker thread `thread` passes `shared`. */
export function newMetrics(threads: number, shared?: SharedArrayBuffer, thread = 0): Metrics {
  return new Metrics(ROUTES.map((r) => r.procedure), shared, thread, threads);
}

export async function serveThread(config: Config, metrics: Metrics): Promise<RunningServer> {
  const log = createLogger(config.logLevel);
  const dispatcher = new Dispatcher(config.publicUrl, log, config.vaultKey);
  configureWorkers(config, log);
  // Written once the public URL is final (below); no request is served before.
  let openapi = '';
  const running = await startServer({
    config,
    dispatcher,
    metrics,
    log,
    page(path) {
      if (path === '/v2/liveness') return { status: 200, contentType: 'application/json', body: successBody(newRequestId(), { message: 'keyward is alive' }) };
      if (path === '/openapi.json') return { status: 200, contentType: 'application/json', body: openapi };
      if (path === '/metrics') return { status: 200, contentType: 'text/plain; version=0.0.4', body: metrics.render(native.stats()) };
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
 * requests through the server's dispatcher, each answered once its reply may leave (the
 * durability rules of http/uws.ts). Transport concerns (methods, content types, body limits)
 * are http/uws.ts's and are not applied here.
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
  const dispatcher = new Dispatcher(config.publicUrl, createLogger(config.logLevel), config.vaultKey);
  return {
    dispatcher,
    request(procedure, body, authorization) {
      const route = dispatcher.lookup(procedure);
      if (route < 0) return Promise.resolve(dispatcher.error(new ApiError('procedure_not_found', `There is no procedure '${procedure}'.`)));
      const { reply, wrote } = dispatcher.dispatch(route, authorization ?? '', body);
      return new Promise((resolve) => {
        whenDurable(wrote, {
          send: () => resolve(reply),
          fail: (err) => resolve(dispatcher.error(new ApiError('storage_unavailable', `The store could not commit this request (${(err as Error).message}); nothing was changed.`))),
        });
      });
    },
    async close() {
      await drainWorkers(10_000);
      closeBatch();
      native.close();
    },
  };
}
