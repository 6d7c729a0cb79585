// Procedure dispatch, independent of the transport: authenticate → (a hot call straight from
// the body bytes) → parse → validate → permission rules → handler → envelope. http/uws.ts
// calls it for every POST /v2/{namespace}.{procedure}; serve.ts openThread without a socket.
// A result carries what the request changed (an Effect), for the durability gate to hold its
// reply by.
import type { AnalyticsClient } from '../analytics/host.js';
import { Ajv, type ValidateFunction } from 'ajv';
import { Authenticator } from '../auth/authenticate.js';
import type { ClusterCredits } from '../cluster/credits.js';
import type { ClusterCalls } from '../cluster/settle.js';
import type { Principal } from '../auth/permissions.js';
import { requirePermission } from '../auth/require.js';
import { boundsMismatches, engineBounds } from '../engine/bounds.js';
import type { DurabilityGate } from '../engine/durability.js';
import { Effect, type HotCalls, type Outcome, type Payment, type Served } from '../engine/hotCalls.js';
import { settleOutcome } from '../request/settle.js';
import { ApiError } from '../errors/apiError.js';
import { CATALOGUE } from '../errors/catalogue.js';
import { invalidBody, malformedJson, unexpectedError } from '../errors/errors.js';
import { fromAjv } from '../errors/fromAjv.js';
import type { Logger } from '../log.js';
import type { Ctx, ListResult } from '../request/context.js';
import { asStorageError, type AsyncWriter } from '../store/db.js';
import type { BackgroundJobs } from '../workers/jobs.js';
import { errorReply, successBody, type Reply } from './envelope.js';
import { newRequestId } from './requestId.js';
import { ROUTES, type Route } from './routes.js';

export interface DispatchResult {
  reply: Reply;
  /** What the request changed: its reply leaves when the gate says so. */
  effect: Effect;
}

/** A serving thread's services, built once at start-up (serve.ts) and shared by its requests. */
export interface ThreadServices {
  readonly gate: DurabilityGate;
  /** Write transactions of requests and background jobs (store/db.ts: this thread's gated writer, settled). */
  readonly writer: AsyncWriter;
  readonly hot: HotCalls;
  readonly jobs: BackgroundJobs;
  readonly log: Logger;
  /** KEYWARD_VAULT_KEY, for recoverable keys. */
  readonly vaultKey: string | undefined;
  /** Cluster mode: where a hot call only the cluster can decide is settled. */
  readonly cluster: ClusterCalls | undefined;
  /** Cluster mode: brings this thread's replica to PostgreSQL's head (rejects when it cannot be reached). */
  readonly catchUp?: () => Promise<void>;
  /** The analytics worker; undefined: analytics is off (KEYWARD_ANALYTICS=off, or no server). */
  readonly analytics?: AnalyticsClient;
}

interface Compiled {
  route: Route;
  validate: ValidateFunction;
}

// The spec names the namespace `ratelimits`, Unkey's SDKs call `ratelimit`: both are served.
const NAMESPACE_ALIASES: Readonly<Record<string, string>> = { ratelimit: 'ratelimits' };

export class Dispatcher {
  private readonly compiled: Compiled[];
  private readonly index = new Map<string, number>();
  private readonly auth = new Authenticator();
  /** Whether the last synchronous dispatch was answered by a hot call from the body bytes. */
  private fromBody = false;

  constructor(
    /** Base of the error `type` URLs (set once the port is known when it was 0). */
    public publicUrl: string,
    private readonly services: ThreadServices,
    routes: readonly Route[] = ROUTES,
  ) {
    for (const r of routes) {
      // fromBody answers without the full way, where permission rules are checked.
      if (r.kind === 'hot' && r.fromBody !== undefined && r.permissions.length > 0) throw new Error(`${r.procedure}: a route with permission rules cannot have fromBody`);
    }
    const mismatches = boundsMismatches(engineBounds(), new Map(routes.filter((r) => r.kind === 'hot').map((r) => [r.procedure, r.request])));
    if (mismatches.length > 0) throw new Error(`the engine's body readers and the request schemas disagree (native/src/body.rs BOUNDS, src/schemas):\n  ${mismatches.join('\n  ')}`);
    const ajv = new Ajv({ allErrors: true, strict: true, useDefaults: true, coerceTypes: false });
    this.compiled = routes.map((route) => ({ route, validate: ajv.compile(route.request) }));
    this.compiled.forEach((c, i) => this.index.set(c.route.procedure, i));
  }

  get procedures(): string[] {
    return this.compiled.map((c) => c.route.procedure);
  }

  private lastPath = '';
  private lastIndex = -1;

  /** Route index for `namespace.procedure` (aliases included), or -1. */
  lookup(name: string): number {
    return this.lookupPath(`/v2/${name}`);
  }

  /** Route index for a request path `/v2/namespace.procedure`, or -1. */
  lookupPath(path: string): number {
    // Clients call one procedure many times in a row: compare the path as uWS gave it before
    // slicing and hashing a new string.
    if (path === this.lastPath) return this.lastIndex;
    const index = path.startsWith('/v2/') ? this.resolve(path.slice(4)) : -1;
    this.lastPath = path;
    this.lastIndex = index;
    return index;
  }

  private resolve(name: string): number {
    const direct = this.index.get(name);
    if (direct !== undefined) return direct;
    const dot = name.indexOf('.');
    const alias = NAMESPACE_ALIASES[name.slice(0, dot)];
    return alias === undefined ? -1 : (this.index.get(alias + name.slice(dot)) ?? -1);
  }

  /**
   * The reply to a request and what it changed: at once for a hot call, a refusal or a
   * handler that answers without writing; a promise for a handler that writes (it resolves
   * once the write is committed and this node's store has it). `noEvents`: the request said
   * `X-Unkey-Metrics: disabled`, so its hot call leaves no analytics event.
   */
  dispatch(routeIndex: number, authorization: string, bytes: Uint8Array, noEvents = false): DispatchResult | Promise<DispatchResult> {
    this.fromBody = false;
    const result = this.serve(routeIndex, authorization, bytes, noEvents);
    if (result instanceof Promise) return result.then(afterAwait);
    // A hot call answered from the body reported its reads itself (the root key's with them).
    if (!this.fromBody) result.effect = this.services.gate.readsOf(result.effect);
    return result;
  }

  private serve(routeIndex: number, authorization: string, bytes: Uint8Array, noEvents: boolean): DispatchResult | Promise<DispatchResult> {
    let ctx: RequestCtx | undefined;
    let input: unknown;
    let route: Route | undefined;
    try {
      const compiled = this.compiled[routeIndex] as Compiled;
      route = compiled.route;
      const validate = compiled.validate;
      // The common refusals (401, 400) are returned, not thrown: V8 computes a message
      // location for every throw under a native callback, which halved their rate.
      const principal = this.auth.authenticate(authorization);
      if (principal instanceof ApiError) return { reply: this.fail(newRequestId(), principal), effect: Effect.None };
      ctx = new RequestCtx(principal, Date.now(), this.services, noEvents);
      // A hot call served from the body draws its request id in the engine.
      const served = route.kind === 'hot' ? route.fromBody?.(bytes, ctx) : undefined;
      if (served !== undefined) {
        this.fromBody = true;
        return { reply: { status: 200, body: served.body, headers: undefined }, effect: served.effect };
      }
      input = parseJson(decodeBody(bytes), bytes);
      if (!validate(input)) {
        // At most MAX_REPORTED_ERRORS are listed: a body of many bad items must not make a
        // reply (and a stall) many times its own size.
        const all = validate.errors ?? [];
        const errors = fromAjv(all.slice(0, MAX_REPORTED_ERRORS), route.procedure);
        return { reply: this.fail(ctx.requestId, invalidBody(route.procedure, errors, all.length - MAX_REPORTED_ERRORS)), effect: ctx.effect };
      }
      for (const rule of route.permissions) {
        const id = rule.idField === undefined ? undefined : (input as Record<string, unknown>)[rule.idField];
        requirePermission(ctx.principal, rule.resource, typeof id === 'string' ? id : undefined, rule.action);
      }
      const result = route.handler(input as never, ctx);
      if (result instanceof Promise) return this.settle(route, input, ctx, result);
      return this.answer(route, ctx, result);
    } catch (err) {
      if (ctx !== undefined && route !== undefined) return this.refused(route, input, ctx, err);
      return { reply: this.fail(newRequestId(), err), effect: Effect.None };
    }
  }

  /** The reply once a handler's promise settles. */
  private async settle(route: Route, input: unknown, ctx: RequestCtx, result: Promise<unknown>): Promise<DispatchResult> {
    try {
      return this.answer(route, ctx, await result);
    } catch (err) {
      return this.refused(route, input, ctx, err);
    }
  }

  /**
   * The reply to a call its handler refused. In cluster mode, a management call that found
   * something missing and changed nothing runs again after a catch-up (afterCatchUp): its
   * replica may not have applied yet what another node created a moment ago, so a client
   * that wrote through one node and goes on through another would see its own write as a 404.
   */
  private refused(route: Route, input: unknown, ctx: RequestCtx, err: unknown): DispatchResult | Promise<DispatchResult> {
    const catchUp = this.services.catchUp;
    if (catchUp !== undefined && route.kind !== 'hot' && ctx.effect === Effect.None && err instanceof ApiError && CATALOGUE[err.errorName].status === 404) {
      return this.afterCatchUp(catchUp, route, input, ctx, err);
    }
    return { reply: this.fail(ctx.requestId, err), effect: ctx.effect };
  }

  /**
   * The call again once this node has every change PostgreSQL had committed (one query, and
   * what the log holds past this node's place). Again even when nothing was behind by then:
   * a concurrent call may have caught up since this one ran. The first refusal stands when
   * PostgreSQL cannot be reached (the replica is all there is).
   */
  private async afterCatchUp(catchUp: () => Promise<void>, route: Route, input: unknown, ctx: RequestCtx, first: unknown): Promise<DispatchResult> {
    try {
      const caughtUp = await catchUp().then(() => true, () => false);
      if (!caughtUp) return { reply: this.fail(ctx.requestId, first), effect: ctx.effect };
      return this.answer(route, ctx, await route.handler(input as never, ctx));
    } catch (err) {
      return { reply: this.fail(ctx.requestId, err), effect: ctx.effect };
    }
  }

  /** The success reply for a handler's result: a hot call's envelope, or data in one. */
  private answer(route: Route, ctx: RequestCtx, result: unknown): DispatchResult {
    if (route.kind === 'hot') {
      // The full way of a limit may also have written itself (a new namespace).
      const served = result as Served;
      return { reply: { status: 200, body: served.body, headers: undefined }, effect: served.effect >= ctx.effect ? served.effect : ctx.effect };
    }
    let text: string;
    if (route.list === true) {
      const page = result as ListResult<unknown>;
      text = successBody(ctx.requestId, page.items, { cursor: page.cursor, hasMore: page.hasMore });
    } else {
      text = successBody(ctx.requestId, result);
    }
    return { reply: { status: 200, body: text, headers: undefined }, effect: ctx.effect };
  }

  /** An error reply for a failure outside a procedure (transport errors). */
  error(err: ApiError): Reply {
    return errorReply(newRequestId(), err, this.publicUrl);
  }

  private fail(requestId: string, err: unknown): Reply {
    const mapped = asStorageError(err);
    if (mapped instanceof ApiError) return errorReply(requestId, mapped, this.publicUrl);
    this.services.log.error('unexpected error', { requestId, error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
    return errorReply(requestId, unexpectedError(requestId), this.publicUrl);
  }
}

/**
 * A request's context. Its id is drawn when first asked for: a hot call answered from the
 * body bytes never asks (its reply carries an id the engine drew).
 */
class RequestCtx implements Ctx {
  private id: string | undefined = undefined;
  /** Effect.Wrote once a transaction of this request committed. */
  effect: Effect = Effect.None;

  constructor(
    readonly principal: Principal,
    readonly nowMs: number,
    private readonly services: ThreadServices,
    private readonly noEvents: boolean,
  ) {}

  get requestId(): string {
    return (this.id ??= newRequestId());
  }

  get vaultKey(): string | undefined {
    return this.services.vaultKey;
  }

  /** The thread's hot calls, told whether this request's calls leave analytics events (every call goes through this getter, right before it is made). */
  get hot(): HotCalls {
    this.services.hot.noEvents = this.noEvents;
    return this.services.hot;
  }

  get credits(): ClusterCredits | undefined {
    return this.services.cluster?.credits;
  }

  settle(outcome: Outcome, again: (payment?: Payment) => Outcome): Served | Promise<Served> {
    return settleOutcome(this.services.cluster, outcome, again);
  }

  get jobs(): BackgroundJobs {
    return this.services.jobs;
  }

  get analytics(): AnalyticsClient | undefined {
    return this.services.analytics;
  }

  async transact<T>(fn: () => T): Promise<T> {
    const result = await this.services.writer.transact(fn);
    this.effect = Effect.Wrote;
    return result;
  }

  transactElsewhere<T>(module: URL, task: object): Promise<T> | undefined {
    // A batch this thread has open is not the pool thread's: it commits at the end of the turn as ever.
    return this.services.jobs.elsewhere<T>(module, task)?.then((result) => {
      this.effect = Effect.Wrote;
      return result;
    });
  }
}

/**
 * A reply answered after an await: what its reads saw of this thread's batches is not known,
 * so it stands only if the batch open when it is held commits.
 */
function afterAwait(result: DispatchResult): DispatchResult {
  if (result.effect === Effect.None) result.effect = Effect.ReadUncommitted;
  return result;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Raw body bytes → string; invalid UTF-8 is a 400, not a replacement character. */
function decodeBody(bytes: Uint8Array): string {
  try {
    return utf8.decode(bytes);
  } catch {
    throw malformedJson('The request body is not valid UTF-8.', { location: 'body', message: 'invalid UTF-8' });
  }
}

/** Validation failures listed in one 400 (errors[] and detail); the count of the rest is given. */
export const MAX_REPORTED_ERRORS = 20;

/** Deepest nesting of arrays/objects accepted in a body (deeper is a 400, not a stack overflow). */
export const MAX_JSON_DEPTH = 64;

function nestingTooDeep(text: string): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \\ */) i++;
      else if (c === 34 /* " */) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 || c === 91) {
      if (++depth > MAX_JSON_DEPTH) return true;
    } else if (c === 125 || c === 93) depth--;
  }
  return false;
}

/** Whether `bytes` holds more than MAX_JSON_DEPTH opening brackets (memchr-speed scans). */
function manyOpenings(bytes: Uint8Array): boolean {
  let seen = 0;
  for (const bracket of [123 /* { */, 91 /* [ */]) {
    for (let at = bytes.indexOf(bracket); at >= 0; at = bytes.indexOf(bracket, at + 1)) {
      if (++seen > MAX_JSON_DEPTH) return true;
    }
  }
  return false;
}

function parseJson(body: string, bytes: Uint8Array): unknown {
  // Nesting past MAX_JSON_DEPTH needs more opening brackets than most bodies have.
  if (manyOpenings(bytes) && nestingTooDeep(body)) {
    throw malformedJson(`The request body is nested more than ${MAX_JSON_DEPTH} levels deep.`, { location: 'body', message: `nesting deeper than ${MAX_JSON_DEPTH} levels` });
  }
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch (err) {
    if (body.trim() === '') {
      throw malformedJson('The request body is empty; send a JSON object.', { location: 'body', message: 'empty body', fix: 'send a JSON object, e.g. {}' });
    }
    const why = err instanceof RangeError ? 'it is nested too deeply' : (err as Error).message;
    throw malformedJson(`The request body is not valid JSON: ${why}.`, { location: 'body', message: 'malformed JSON' });
  }
  // A \uD800–\uDFFF escape can smuggle an unpaired surrogate into a string, which is not text
  // (it has no UTF-8 form). Only bodies with such an escape are walked.
  if (/\\u[dD][89a-fA-F]/.test(body) && !wellFormed(value)) {
    throw malformedJson('The request body contains a string with an unpaired UTF-16 surrogate escape (\\uD800–\\uDFFF); strings must be valid Unicode text.', { location: 'body', message: 'unpaired surrogate in a string' });
  }
  return value;
}

function wellFormed(value: unknown): boolean {
  if (typeof value === 'string') return value.isWellFormed();
  if (Array.isArray(value)) return value.every(wellFormed);
  if (typeof value === 'object' && value !== null) return Object.entries(value).every(([k, v]) => k.isWellFormed() && wellFormed(v));
  return true;
}
