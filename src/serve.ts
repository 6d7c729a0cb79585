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
import { enableGroupCommit, setDurability } from './store/durability.js';
import { configureWorkers } from './workers/pool.js';

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
