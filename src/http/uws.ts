// The only file that knows uWebSockets.js. It maps HTTP onto the dispatcher:
//   POST /v2/{namespace}.{procedure}  → procedures (405 for other methods, 415 without JSON,
//                                       413 past KEYWARD_MAX_BODY_BYTES, 408 past the deadline)
//   GET  /v2/liveness, /metrics, /openapi.json, /docs/errors/…  → pages (HEAD too)
// Everything else is 404. Every error uses the error envelope. Accepting pauses while the
// process is short of file descriptors (Listener).
import { closeSync, openSync } from 'node:fs';
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import type { Config } from '../config.js';
import type { DurabilityGate, Outgoing } from '../engine/durability.js';
import { commitFailed, methodNotAllowed, procedureNotFound, requestBodyTooLarge, requestTimeout, shuttingDown, storageUnavailable, unsupportedMediaType } from '../errors/errors.js';
import type { Dispatcher, DispatchResult } from '../rpc/dispatch.js';
import { type Reply } from '../rpc/envelope.js';
import type { Metrics } from '../rpc/metrics.js';
import { errorPage, type Page } from './pages.js';
import type { Logger } from '../log.js';

// Loaded straight from the package's binaries: its index silently falls back to a slow
// pure-JS server when the binary does not load, and keyward refuses to run on that.
interface UwsResponse {
  onAborted(cb: () => void): UwsResponse;
  onData(cb: (chunk: ArrayBuffer, isLast: boolean) => void): void;
  cork(cb: () => void): UwsResponse;
  writeStatus(status: string): UwsResponse;
  writeHeader(key: string | Uint8Array, value: string | Uint8Array): UwsResponse;
  end(body?: string, closeConnection?: boolean): UwsResponse;
  /** Declared without its (length, close) parameters: see endWith, any argument breaks the connection. */
  endWithoutBody(): UwsResponse;
}

interface UwsRequest {
  getMethod(): string;
  getUrl(): string;
  getHeader(name: string | Uint8Array): string;
  forEach(cb: (key: string, value: string) => void): void;
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

/**
 * Ends `res` with `body`, or for a HEAD request with only the length `body` would have.
 * This uWS build's endWithoutBody(length) waits for that many body bytes and closes the
 * connection at the next request, and any argument to it (even undefined) is taken as a
 * length: so the length goes in as a header, and `close` as `Connection: close` (the client
 * closes; HEAD with close is a HEAD with a body, or one answered while draining).
 */
function endWith(res: UwsResponse, body: string, head: boolean, close: boolean): void {
  if (!head) {
    res.end(body, close);
    return;
  }
  res.writeHeader('Content-Length', String(Buffer.byteLength(body)));
  if (close) res.writeHeader('Connection', 'close');
  res.endWithoutBody();
}

const STATUS_TEXT: Readonly<Record<number, string>> = {
  200: '200 OK', 400: '400 Bad Request', 401: '401 Unauthorized', 403: '403 Forbidden', 404: '404 Not Found',
  405: '405 Method Not Allowed', 408: '408 Request Timeout', 409: '409 Conflict', 410: '410 Gone',
  412: '412 Precondition Failed', 413: '413 Payload Too Large', 415: '415 Unsupported Media Type',
  429: '429 Too Many Requests', 500: '500 Internal Server Error', 501: '501 Not Implemented', 503: '503 Service Unavailable',
  507: '507 Insufficient Storage',
};

const GET_PATHS: ReadonlySet<string> = new Set(['/v2/liveness', '/metrics', '/openapi.json']);

// Header names and the JSON content type as bytes: uWS converts every JS string argument to
// UTF-8 in a fresh allocation, and these are passed on every request (a few % of the server's
// CPU at the peak), where bytes are read in place.
const bytes = (text: string): Uint8Array => new Uint8Array(Buffer.from(text, 'latin1'));
const H = {
  contentType: bytes('content-type'),
  contentEncoding: bytes('content-encoding'),
  contentLength: bytes('content-length'),
  transferEncoding: bytes('transfer-encoding'),
  expect: bytes('expect'),
  authorization: bytes('authorization'),
  unkeyMetrics: bytes('x-unkey-metrics'),
  ContentType: bytes('Content-Type'),
  applicationJson: bytes('application/json'),
};
// application/json, with parameters; a charset, if named, must be UTF-8 (JSON's only encoding)
// or US-ASCII (a subset of it).
const JSON_TYPE = /^application\/json\s*(;|$)/i;
const CHARSET = /;\s*charset\s*=\s*"?([^";\s]*)/i;

const IDENTITY = /^\s*identity\s*$/i;

/**
 * A Content-Encoding other than `identity`, if the request has one. getHeader gives the first
 * header of a name only, so a request whose first one says `identity` has the others read too.
 */
function compressedEncoding(req: UwsRequest): string | undefined {
  const first = req.getHeader(H.contentEncoding);
  if (first === '') return undefined;
  if (!IDENTITY.test(first)) return first;
  let other: string | undefined;
  req.forEach((name, value) => {
    if (other === undefined && name === 'content-encoding' && !IDENTITY.test(value)) other = value;
  });
  return other;
}

function isJsonType(contentType: string): boolean {
  if (contentType === 'application/json') return true;
  if (!JSON_TYPE.test(contentType)) return false;
  const charset = CHARSET.exec(contentType)?.[1];
  return charset === undefined || /^(utf-?8|us-ascii)$/i.test(charset);
}

export interface ServerDeps {
  config: Config;
  dispatcher: Dispatcher;
  /** Holds each reply until what its request changed is as durable as the mode promises. */
  gate: DurabilityGate;
  metrics: Metrics;
  log: Logger;
  /** The process's soft limit of open descriptors: accepting pauses short of it (Listener). */
  descriptorsLimit: number;
  /** GET pages that need more than this file knows (metrics, OpenAPI). */
  page(path: string): Page | undefined;
}

/**
 * The least a drain lasts. A request can sit unread in a connection's buffer (this thread
 * busy, or not yet scheduled) while nothing is in flight; without the wait, the process
 * could exit before reading it and the client would see its connection drop unanswered.
 */
const DRAIN_GRACE_MS = 100;

/**
 * A body past KEYWARD_MAX_BODY_BYTES is read and dropped up to this many bytes before its 413
 * leaves, so a client still sending reads the reply instead of a reset (EPIPE); one that sends
 * more is answered and cut off there.
 */
const DISCARD_BYTES = 16 * 1024 * 1024;

export interface RunningServer {
  port: number;
  /**
   * Stop accepting, finish in-flight requests; resolves when none is left (or after
   * timeoutMs), and not before DRAIN_GRACE_MS: requests already in the sockets' buffers when
   * the drain began are read and answered (503 shutting_down) rather than cut off at exit.
   */
  drain(timeoutMs: number): Promise<void>;
}

/**
 * Descriptors kept free below the soft limit when accepting connections: the store, worker
 * threads, PostgreSQL and Redis connections, logs and files opened on demand need theirs.
 */
const DESCRIPTOR_RESERVE = 32;
/** How often the descriptors are looked at while accepting… */
const DESCRIPTOR_CHECK_MS = 50;
/** …and while paused, just after a pause, or close to the limit. */
const DESCRIPTOR_CHECK_FAST_MS = 10;
/**
 * Descriptors that must be free below `limit − DESCRIPTOR_RESERVE` for accepting to resume: the
 * listen socket needs one, and resuming for one connection at a time would pause again at once.
 */
const RESUME_FREE = 16;
/** How long after accepting resumed the descriptors are still looked at as often as while paused. */
const RESUMED_WATCH_MS = 1_000;
/** The least time between two warnings about pauses. */
const PAUSE_WARN_EVERY_MS = 60_000;

/**
 * The `n`th lowest descriptor number free in the process (open(2) returns the lowest free
 * one), by opening /dev/null `n` times and closing them at once; -1 when fewer are free
 * (EMFILE, or ENFILE for the system). Throws when /dev/null cannot be opened for another reason.
 */
function nthFreeDescriptor(n: number): number {
  const fds: number[] = [];
  try {
    while (fds.length < n) fds.push(openSync('/dev/null', 'r'));
    return fds[n - 1] as number;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EMFILE' || code === 'ENFILE') return -1;
    throw err;
  } finally {
    for (const fd of fds) closeSync(fd);
  }
}

/**
 * A listen socket on host:port, or false (uWS calls back before listen returns). Port 0:
 * uSockets sets SO_REUSEADDR and SO_REUSEPORT only on the listen socket of a given port, and
 * the connections accepted on one without them keep the port from being bound again while they
 * last (Listener could not listen again after a pause); so the port the system picked is
 * bound again at once, with them, before anything is accepted.
 */
function listenNow(uws: Uws, app: UwsApp, host: string, port: number): unknown {
  let token: unknown = false;
  for (let attempt = 0; attempt < 3 && !token; attempt++) {
    app.listen(host, port, (t) => (token = t));
    if (!token || port !== 0) continue;
    const picked = uws.us_socket_local_port(token);
    uws.us_listen_socket_close(token);
    token = false;
    app.listen(host, picked, (t) => (token = t));
  }
  return token;
}

/**
 * This thread's listen socket, closed while the process is short of descriptors. uSockets
 * accepts from a level-triggered epoll: when accept() fails with EMFILE the connection stays
 * queued, the listen socket stays readable and the loop spins at full CPU, serving the
 * connections it has late, until some descriptor is freed. So the lowest free descriptor is
 * looked at every few ms; from `limit − DESCRIPTOR_RESERVE` on (or none free) the listen
 * socket is closed, new connections are refused and those accepted keep being served, and it
 * listens again on the same port once RESUME_FREE descriptors are free below that. With
 * several serving threads each pauses its own listen socket (they share the port, SO_REUSEPORT).
 *
 * A burst of connections can take every descriptor between two looks. So while it accepts,
 * each thread holds DESCRIPTOR_RESERVE descriptors open (on /dev/null) and pauses only close
 * to the limit; pausing closes them, and the reserve is free for the rest of the process
 * (a worker thread starting, a file opened) whatever the burst took. It takes them again
 * before it listens again.
 */
class Listener {
  /** The listen socket; undefined while paused (or closed for good). */
  private token: unknown;
  private closed = false;
  private timer: NodeJS.Timeout | undefined;
  /** The lowest free descriptor from which accepting pauses. */
  private readonly threshold: number;
  /** Accepting resumed at (performance.now() ms). */
  private resumedAt = -Infinity;
  private pausesUnreported = 0;
  private warnedAt = -Infinity;
  /** /dev/null could not be opened (for another reason than a lack of descriptors). */
  private blind = false;
  /** The reserve this thread holds while it accepts (descriptors of /dev/null). */
  private readonly reserve: number[] = [];
  private readonly reserveSize: number;

  constructor(
    private readonly uws: Uws,
    private readonly app: UwsApp,
    private readonly host: string,
    readonly port: number,
    token: unknown,
    private readonly deps: ServerDeps,
  ) {
    this.token = token;
    const limit = deps.descriptorsLimit;
    // A limit so low that the reserve would be most of it keeps a quarter of it instead.
    this.threshold = Math.max(limit - DESCRIPTOR_RESERVE, Math.floor((limit * 3) / 4));
    // Each thread the whole reserve: the threads pause one after the other, and the last to
    // pause (no thread accepting any more) leaves all of its reserve free. Many threads at a
    // low limit hold less each, all of them an eighth of the limit at most.
    this.reserveSize = Math.min(limit - this.threshold, Math.floor(limit / 8 / deps.config.threads));
    this.holdReserve();
    deps.metrics.descriptorsLimit = limit;
    this.schedule(DESCRIPTOR_CHECK_MS);
  }

  /** Takes the reserve; all of it, or (descriptors short) none. */
  private holdReserve(): boolean {
    try {
      while (this.reserve.length < this.reserveSize) this.reserve.push(openSync('/dev/null', 'r'));
      return true;
    } catch {
      this.releaseReserve();
      return false;
    }
  }

  private releaseReserve(): void {
    for (const fd of this.reserve.splice(0)) closeSync(fd);
  }

  private schedule(ms: number): void {
    this.timer = setTimeout(() => this.check(), ms);
    this.timer.unref();
  }

  private check(): void {
    if (this.closed) return;
    let free = 0;
    try {
      // Paused: room for every thread's reserve to be taken again, and RESUME_FREE more below
      // the threshold (a thread that resumed on the others' reserves would leave the process none).
      free = nthFreeDescriptor(this.token === undefined ? RESUME_FREE + this.reserveSize * this.deps.config.threads : 1);
    } catch (err) {
      // Taken as plenty free: accepting goes on (or resumes), as it would without the watch.
      if (!this.blind) this.deps.log.warn('cannot look at free descriptors (opening /dev/null failed): accepting does not pause when they run short', { error: (err as Error).message });
      this.blind = true;
    }
    // Accepting, the reserve held counts as free: the pause comes RESUME_FREE short of the limit.
    const pauseAt = this.token === undefined ? this.threshold : Math.min(this.deps.descriptorsLimit - RESUME_FREE, this.threshold + this.reserve.length);
    const short = free < 0 || free >= pauseAt;
    if (short && this.token !== undefined) this.pause(free);
    else if (!short && this.token === undefined) this.resume();
    const now = performance.now();
    const fast = this.token === undefined || now - this.resumedAt < RESUMED_WATCH_MS || free >= this.threshold - 4 * DESCRIPTOR_RESERVE;
    this.schedule(fast ? DESCRIPTOR_CHECK_FAST_MS : DESCRIPTOR_CHECK_MS);
  }

  private pause(free: number): void {
    this.uws.us_listen_socket_close(this.token);
    this.token = undefined;
    this.releaseReserve();
    this.deps.metrics.acceptPaused();
    this.pausesUnreported++;
    const now = performance.now();
    if (now - this.warnedAt < PAUSE_WARN_EVERY_MS) return;
    this.warnedAt = now;
    this.deps.log.warn('short of file descriptors: not accepting connections until some are free (keyward_accept_paused_total counts the pauses; raise the limit, see docs/operations.md)', {
      limit: this.deps.descriptorsLimit,
      lowestFree: free,
      pauses: this.pausesUnreported,
    });
    this.pausesUnreported = 0;
  }

  /** A failed listen (no descriptor for it yet, say) is tried again at the next check. */
  private resume(): void {
    if (!this.holdReserve()) return;
    const token = listenNow(this.uws, this.app, this.host, this.port);
    if (!token) {
      this.releaseReserve();
      return;
    }
    this.token = token;
    this.resumedAt = performance.now();
  }

  /** Stops accepting for good (drain). */
  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.releaseReserve();
    if (this.token !== undefined) this.uws.us_listen_socket_close(this.token);
    this.token = undefined;
  }
}

/**
 * One request in flight. Requests whose body is still arriving are kept in a list ordered
 * by deadline (every request gets the same timeout, so arrival order is deadline order):
 * linking and unlinking are O(1) and allocate nothing.
 */
class Pending implements Outgoing {
  done = false;
  deadlineMs = 0;
  prev: Pending | undefined = undefined;
  next: Pending | undefined = undefined;
  /** Chunks of a body that came in several pieces (copied: uWS reuses its memory). */
  chunks: Buffer[] | undefined = undefined;
  bodyBytes = 0;
  reply: Reply | undefined = undefined;
  /** A HEAD request: every answer is sent without its body. */
  head = false;
  /** The body is too large: it is being read and dropped, and this reply leaves when it ends. */
  overflow: Reply | undefined = undefined;
  /** `X-Unkey-Metrics: disabled`: the request leaves no analytics event. */
  noEvents = false;

  constructor(
    readonly server: Server,
    readonly res: UwsResponse,
    readonly started: number,
    public routeIndex: number,
  ) {}

  send(): void {
    this.server.finish(this, this.reply as Reply);
  }

  fail(err: unknown): void {
    this.server.finish(this, this.server.dispatcher.error(commitFailed(err)));
  }
}

class Server {
  inFlight = 0;
  draining = false;
  private oldest: Pending | undefined = undefined;
  private newest: Pending | undefined = undefined;

  constructor(
    readonly deps: ServerDeps,
    readonly dispatcher: Dispatcher,
  ) {}

  /** Deadline list: the body of `p` is awaited until `p.deadlineMs` (performance.now() ms). */
  await(p: Pending): void {
    p.deadlineMs = p.started + this.deps.config.requestTimeoutMs;
    p.prev = this.newest;
    if (this.newest === undefined) this.oldest = p;
    else this.newest.next = p;
    this.newest = p;
  }

  private unlink(p: Pending): void {
    if (p.deadlineMs === 0) return;
    p.deadlineMs = 0;
    if (p.prev === undefined) this.oldest = p.next;
    else p.prev.next = p.next;
    if (p.next === undefined) this.newest = p.prev;
    else p.next.prev = p.prev;
    p.prev = p.next = undefined;
  }

  /** Answers 408 for every request whose body has not arrived by its deadline (413 for one being dropped). */
  expire(nowMs: number): void {
    while (this.oldest !== undefined && this.oldest.deadlineMs <= nowMs) {
      const p = this.oldest;
      this.finish(p, p.overflow ?? this.dispatcher.error(requestTimeout(this.deps.config.requestTimeoutMs)), true);
    }
  }

  /**
   * `p`'s body is larger than allowed: what arrives is dropped, and the 413 leaves once the
   * body ends (the connection stays usable) or DISCARD_BYTES have come (then it closes).
   */
  overflow(p: Pending, isLast: boolean): void {
    p.chunks = undefined;
    p.overflow ??= tooLarge(this.dispatcher, this.deps.config.maxBodyBytes);
    if (isLast) this.finish(p, p.overflow);
    else if (p.bodyBytes > DISCARD_BYTES) this.finish(p, p.overflow, true);
  }

  /** Marks `p` answered or abandoned (no longer in flight); false when it already was. */
  settle(p: Pending): boolean {
    if (p.done) return false;
    p.done = true;
    this.unlink(p);
    this.inFlight--;
    return true;
  }

  finish(p: Pending, reply: Reply, close = false): void {
    if (!this.settle(p)) return;
    this.deps.metrics.record(p.routeIndex, reply.status, (performance.now() - p.started) / 1000);
    const res = p.res;
    const closing = close || this.draining;
    res.cork(() => {
      if (reply.status !== 200) res.writeStatus(STATUS_TEXT[reply.status] ?? `${reply.status} Error`);
      res.writeHeader(H.ContentType, H.applicationJson);
      if (reply.headers !== undefined) for (const [k, v] of Object.entries(reply.headers)) res.writeHeader(k, v);
      endWith(res, reply.body, p.head, closing);
    });
  }

  /** A chunk of `p`'s body; dispatches once the whole body is in. */
  data(p: Pending, authorization: string, chunk: ArrayBuffer, isLast: boolean): void {
    if (p.done) return;
    p.bodyBytes += chunk.byteLength;
    if (p.overflow !== undefined || p.bodyBytes > this.deps.config.maxBodyBytes) return this.overflow(p, isLast);
    let body: Uint8Array;
    if (p.chunks === undefined && isLast) {
      // One chunk: a view of uWS's memory, valid only during this callback (the dispatcher
      // consumes it synchronously).
      body = new Uint8Array(chunk);
    } else {
      (p.chunks ??= []).push(Buffer.from(new Uint8Array(chunk)));
      if (!isLast) return;
      body = Buffer.concat(p.chunks, p.bodyBytes);
    }
    this.unlink(p); // the deadline is for the body's arrival
    const result = this.dispatcher.dispatch(p.routeIndex, authorization, body, p.noEvents);
    if (result instanceof Promise) void result.then((r) => this.hold(p, r));
    else this.hold(p, result);
  }

  /** Hands a dispatched reply to the durability gate (a client gone meanwhile is skipped at finish). */
  private hold(p: Pending, { reply, effect }: DispatchResult): void {
    p.reply = reply;
    this.deps.gate.hold(effect, p);
  }
}

export function startServer(deps: ServerDeps): Promise<RunningServer> {
  const { config, dispatcher, metrics } = deps;
  const uws = loadUws();
  const app = uws.App();
  const server = new Server(deps, dispatcher);

  /** A GET page; for HEAD its status and headers, with the length the body would have. */
  const sendPage = (p: Pending, page: Page): void => {
    server.settle(p);
    metrics.record(-1, page.status, (performance.now() - p.started) / 1000);
    p.res.cork(() => {
      p.res.writeStatus(STATUS_TEXT[page.status] ?? `${page.status}`).writeHeader('Content-Type', page.contentType);
      endWith(p.res, page.body, p.head, false);
    });
  };

  app.any('/*', (res, req) => {
    const p = new Pending(server, res, performance.now(), -1);
    server.inFlight++;
    res.onAborted(() => server.settle(p));
    const method = req.getMethod(); // lower case
    p.head = method === 'head';
    const url = req.getUrl();
    if (server.draining) return server.finish(p, dispatcher.error(shuttingDown()), true);

    if (url.startsWith('/v2/') && url !== '/v2/liveness') {
      p.routeIndex = dispatcher.lookupPath(url);
      if (p.routeIndex < 0) return server.finish(p, dispatcher.error(procedureNotFound(`There is no procedure '${url.slice(4)}'. Procedures are POST /v2/{namespace}.{procedure}; see /openapi.json for the list.`)), hasBody(req));
      if (method !== 'post') return server.finish(p, dispatcher.error(methodNotAllowed(`${url} accepts only POST, not ${method.toUpperCase()}.`, 'POST')), hasBody(req));
      const contentType = req.getHeader(H.contentType);
      if (!isJsonType(contentType)) {
        return server.finish(p, dispatcher.error(unsupportedMediaType('Send the body as JSON with `Content-Type: application/json`.')), true);
      }
      const encoding = compressedEncoding(req);
      if (encoding !== undefined) {
        return server.finish(p, dispatcher.error(unsupportedMediaType(`Send the body uncompressed: Content-Encoding '${encoding.slice(0, 64)}' is not supported.`)), true);
      }
      const declared = req.getHeader(H.contentLength);
      const authorization = req.getHeader(H.authorization);
      p.noEvents = req.getHeader(H.unkeyMetrics).toLowerCase() === 'disabled';
      server.await(p);
      if (declared !== '' && Number(declared) > config.maxBodyBytes) {
        // A client waiting for 100 Continue has sent nothing yet, and one announcing more than
        // is ever read would be cut off anyway: answered at once.
        if (/100-continue/i.test(req.getHeader(H.expect)) || Number(declared) > DISCARD_BYTES) return server.finish(p, tooLarge(dispatcher, config.maxBodyBytes), true);
        p.overflow = tooLarge(dispatcher, config.maxBodyBytes);
      }
      res.onData((chunk, isLast) => server.data(p, authorization, chunk, isLast));
      return;
    }

    let page: Page | undefined;
    try {
      page = url.startsWith('/docs/errors/') ? errorPage(url) : GET_PATHS.has(url) ? deps.page(url) : undefined;
    } catch (err) {
      // A page that reads the store (/metrics) answers 503 when it cannot, as procedures do.
      return server.finish(p, dispatcher.error(storageUnavailable(`${url} could not be read from the store (${(err as Error).message}).`)), hasBody(req));
    }
    if (page === undefined) return server.finish(p, dispatcher.error(procedureNotFound(`Nothing is served at ${url}.`)), hasBody(req));
    if (method !== 'get' && method !== 'head') return server.finish(p, dispatcher.error(methodNotAllowed(`${url} accepts only GET (and HEAD).`, 'GET, HEAD')), hasBody(req));
    sendPage(p, page);
  });

  // One timer for all request deadlines (cheaper than a timer per request).
  // Fine enough that a 408 at the longest deadline still leaves before uWS's own idle close.
  const tickMs = Math.max(5, Math.min(250, Math.floor(config.requestTimeoutMs / 4)));
  const timer = setInterval(() => server.expire(performance.now()), tickMs);
  timer.unref();

  const token = listenNow(uws, app, config.host, config.port);
  if (!token) return Promise.reject(new Error(`could not listen on ${config.host}:${config.port} (KEYWARD_HOST, KEYWARD_PORT): in use, or not a local address`));
  const listener = new Listener(uws, app, config.host, uws.us_socket_local_port(token), token, deps);
  return Promise.resolve({
    port: listener.port,
    drain: async (timeoutMs) => {
      server.draining = true;
      listener.close();
      const started = Date.now();
      const until = started + timeoutMs;
      while ((server.inFlight > 0 || Date.now() < started + DRAIN_GRACE_MS) && Date.now() < until) await new Promise((r) => setTimeout(r, 5));
      clearInterval(timer);
    },
  });
}

/**
 * Replies sent before the body was read close the connection, so no unread body is mistaken
 * for the next request.
 */
function hasBody(req: UwsRequest): boolean {
  return req.getHeader(H.contentLength) !== '' || req.getHeader(H.transferEncoding) !== '';
}

function tooLarge(dispatcher: Dispatcher, max: number): Reply {
  return dispatcher.error(requestBodyTooLarge(max));
}
