// The only file that knows uWebSockets.js. It maps HTTP onto the dispatcher:
//   POST /v2/{namespace}.{procedure}  → procedures (405 for other methods, 415 without JSON,
//                                       413 past KEYWARD_MAX_BODY_BYTES, 408 past the deadline)
//   GET  /v2/liveness, /metrics, /openapi.json, /docs/errors/…  → pages
// Everything else is 404. Every error uses the error envelope.
import { createRequire } from 'node:module';
import type { Config } from '../config.js';
import { ApiError } from '../errors/apiError.js';
import type { Dispatcher } from '../rpc/dispatch.js';
import { type Reply } from '../rpc/envelope.js';
import type { Metrics } from '../rpc/metrics.js';
import { whenDurable } from '../store/durability.js';
import { BodyReader, BodyTooLarge } from './body.js';
import { errorPage, type Page } from './pages.js';
import type { Logger } from '../log.js';

// Loaded straight from the package's binaries: its index silently falls back to a slow
// pure-JS server when the binary does not load, and keyward refuses to run on that.
interface UwsResponse {
  onAborted(cb: () => void): UwsResponse;
  onData(cb: (chunk: ArrayBuffer, isLast: boolean) => void): void;
  cork(cb: () => void): UwsResponse;
  writeStatus(status: string): UwsResponse;
  writeHeader(key: string, value: string): UwsResponse;
  end(body?: string, closeConnection?: boolean): UwsResponse;
}
interface UwsRequest {
  getMethod(): string;
  getUrl(): string;
  getHeader(name: string): string;
}
interface UwsApp {
  any(pattern: string, handler: (res: UwsResponse, req: UwsRequest) => void): UwsApp;
  listen(host: string, port: number, cb: (token: unknown) => void): UwsApp;
}
interface Uws {
  App(): UwsApp;
  us_listen_socket_close(token: unknown): void;
  us_socket_local_port(token: unknown): number;
}

export function loadUws(): Uws {
  const require = createRequire(import.meta.url);
  const pkgDir = require.resolve('uWebSockets.js/package.json').replace(/package\.json$/, '');
  const binary = `${pkgDir}binaries/uws_${process.platform}_${process.arch}_${process.versions.modules}.node`;
  let uws: Uws;
  try {
    uws = require(binary) as Uws;
  } catch (err) {
    throw new Error(`uWebSockets.js native binary did not load (${binary}): ${(err as Error).message}. keyward does not run on the slow JS fallback.`);
  }
  if (typeof uws.App !== 'function' || typeof uws.us_listen_socket_close !== 'function') {
    throw new Error(`${binary} is not the uWebSockets.js native binary`);
  }
  return uws;
}

const STATUS_TEXT: Record<number, string> = {
  200: '200 OK', 400: '400 Bad Request', 401: '401 Unauthorized', 403: '403 Forbidden', 404: '404 Not Found',
  405: '405 Method Not Allowed', 408: '408 Request Timeout', 409: '409 Conflict', 410: '410 Gone',
  412: '412 Precondition Failed', 413: '413 Payload Too Large', 415: '415 Unsupported Media Type',
  429: '429 Too Many Requests', 500: '500 Internal Server Error', 501: '501 Not Implemented', 503: '503 Service Unavailable',
};

const GET_PATHS = new Set(['/v2/liveness', '/metrics', '/openapi.json']);
const JSON_TYPE = /^application\/json\s*(;|$)/i;

export interface ServerDeps {
  config: Config;
  dispatcher: Dispatcher;
  metrics: Metrics;
  log: Logger;
  /** GET pages that need more than this file knows (metrics, OpenAPI). */
  page(path: string): Page | undefined;
}

export interface RunningServer {
  port: number;
  /** Stop accepting, finish in-flight requests; resolves when none is left (or after timeoutMs). */
  drain(timeoutMs: number): Promise<void>;
}

interface Pending {
  deadlineMs: number;
  res: UwsResponse;
  done: boolean;
  started: number;
  routeIndex: number;
}

export function startServer(deps: ServerDeps): Promise<RunningServer> {
  const { config, dispatcher, metrics } = deps;
  const uws = loadUws();
  const app = uws.App();
  const pending = new Set<Pending>();
  let inFlight = 0;
  let draining = false;

  const finish = (p: Pending, reply: Reply, close = false): void => {
    if (p.done) return;
    p.done = true;
    pending.delete(p);
    inFlight--;
    metrics.record(p.routeIndex, reply.status, (performance.now() - p.started) / 1000);
    p.res.cork(() => {
      p.res.writeStatus(STATUS_TEXT[reply.status] ?? `${reply.status} Error`);
      p.res.writeHeader('Content-Type', 'application/json');
      if (reply.headers !== undefined) for (const [k, v] of Object.entries(reply.headers)) p.res.writeHeader(k, v);
      p.res.end(reply.body, close || draining);
    });
  };

  const sendPage = (p: Pending, page: Page): void => {
    p.done = true;
    inFlight--;
    metrics.record(-1, page.status, (performance.now() - p.started) / 1000);
    p.res.cork(() => {
      p.res.writeStatus(STATUS_TEXT[page.status] ?? `${page.status}`).writeHeader('Content-Type', page.contentType).end(page.body);
    });
  };

  app.any('/*', (res, req) => {
    const p: Pending = { deadlineMs: 0, res, done: false, started: performance.now(), routeIndex: -1 };
    inFlight++;
    res.onAborted(() => {
      if (!p.done) {
        p.done = true;
        pending.delete(p);
        inFlight--;
      }
    });
    const method = req.getMethod().toLowerCase();
    const url = req.getUrl();
    // Replies sent before the body was read close the connection, so no unread body is
    // mistaken for the next request.
    const hasBody = req.getHeader('content-length') !== '' || req.getHeader('transfer-encoding') !== '';
    if (draining) return finish(p, dispatcher.error(new ApiError('shutting_down', 'The server is shutting down; retry on another instance or after it restarts.')), true);

    if (url.startsWith('/v2/') && url !== '/v2/liveness') {
      p.routeIndex = dispatcher.lookup(url.slice(4));
      if (p.routeIndex < 0) return finish(p, dispatcher.error(new ApiError('procedure_not_found', `There is no procedure '${url.slice(4)}'. Procedures are POST /v2/{namespace}.{procedure}; see /openapi.json for the list.`)), hasBody);
      if (method !== 'post') return finish(p, dispatcher.error(new ApiError('method_not_allowed', `${url} accepts only POST, not ${method.toUpperCase()}.`, { headers: { Allow: 'POST' } })), hasBody);
      if (!JSON_TYPE.test(req.getHeader('content-type'))) {
        return finish(p, dispatcher.error(new ApiError('unsupported_media_type', 'Send the body as JSON with `Content-Type: application/json`.')), true);
      }
      const declared = req.getHeader('content-length');
      if (declared !== '' && Number(declared) > config.maxBodyBytes) return finish(p, tooLarge(dispatcher, config.maxBodyBytes), true);
      const authorization = req.getHeader('authorization');
      const reader = new BodyReader(config.maxBodyBytes);
      p.deadlineMs = Date.now() + config.requestTimeoutMs;
      pending.add(p);
      res.onData((chunk, isLast) => {
        if (p.done) return;
        let bytes: Uint8Array | undefined;
        try {
          bytes = reader.push(chunk, isLast);
        } catch (err) {
          if (err instanceof BodyTooLarge) return finish(p, tooLarge(dispatcher, config.maxBodyBytes), true);
          throw err;
        }
        if (bytes === undefined) return;
        pending.delete(p); // the deadline is for the body's arrival
        const { reply, wrote } = dispatcher.dispatch(p.routeIndex, authorization, bytes);
        whenDurable(wrote, () => finish(p, reply), (err) => finish(p, dispatcher.error(new ApiError('storage_unavailable', `The store could not commit this request (${(err as Error).message}); nothing was changed.`))));
      });
      return;
    }

    const page = GET_PATHS.has(url) || url.startsWith('/docs/errors/') ? (url.startsWith('/docs/errors/') ? errorPage(url) : deps.page(url)) : undefined;
    if (page === undefined) return finish(p, dispatcher.error(new ApiError('procedure_not_found', `Nothing is served at ${url}.`)), hasBody);
    if (method !== 'get') return finish(p, dispatcher.error(new ApiError('method_not_allowed', `${url} accepts only GET.`, { headers: { Allow: 'GET' } })), hasBody);
    sendPage(p, page);
  });

  // One timer for all request deadlines (cheaper than a timer per request).
  const tickMs = Math.max(5, Math.min(1000, Math.floor(config.requestTimeoutMs / 4)));
  const timer = setInterval(() => {
    const now = Date.now();
    for (const p of pending) {
      if (p.deadlineMs <= now) finish(p, dispatcher.error(new ApiError('request_timeout', `The request body did not arrive within ${config.requestTimeoutMs} ms.`)), true);
    }
  }, tickMs);
  timer.unref();

  return new Promise((resolve, reject) => {
    app.listen(config.host, config.port, (token) => {
      if (!token) {
        reject(new Error(`could not listen on ${config.host}:${config.port} (in use, or not a local address)`));
        return;
      }
      resolve({
        port: uws.us_socket_local_port(token),
        drain: async (timeoutMs) => {
          draining = true;
          uws.us_listen_socket_close(token);
          const until = Date.now() + timeoutMs;
          while (inFlight > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 5));
          clearInterval(timer);
        },
      });
    });
  });
}

function tooLarge(dispatcher: Dispatcher, max: number): Reply {
  return dispatcher.error(new ApiError('request_body_too_large', `The request body is larger than ${max} bytes (KEYWARD_MAX_BODY_BYTES).`));
}
