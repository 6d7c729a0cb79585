// Procedure dispatch, independent of the transport: authenticate → parse → validate →
// permission rules → handler → envelope. Tests call it without a socket; http/uws.ts
// calls it for every POST /v2/{namespace}.{procedure}.
import { Ajv, type ValidateFunction } from 'ajv';
import { authenticate } from '../auth/authenticate.js';
import { requirePermission } from '../auth/require.js';
import { ApiError } from '../errors/apiError.js';
import { fromAjv } from '../errors/fromAjv.js';
import { RawBody } from '../domain/rawJson.js';
import { asStorageError } from '../store/db.js';
import { commitCount } from '../store/durability.js';
import type { Ctx, ListResult } from '../procedures/context.js';
import type { Principal } from '../auth/permissions.js';
import { newRequestId } from './requestId.js';
import { ROUTES, type Route } from './routes.js';
import { errorReply, successBody, type Reply } from './envelope.js';
import type { Logger } from '../log.js';

export interface DispatchResult {
  reply: Reply;
  /** The request committed a write: in `disk` mode its reply waits for an fsync. */
  wrote: boolean;
}

interface Compiled {
  route: Route;
  validate: ValidateFunction;
}

// The spec names the namespace `ratelimits`, Unkey's SDKs call `ratelimit`: both are served.
const NAMESPACE_ALIASES: Record<string, string> = { ratelimit: 'ratelimits' };

export class Dispatcher {
  private readonly compiled: Compiled[];
  private readonly index = new Map<string, number>();

  constructor(
    /** Base of the error `type` URLs (set once the port is known when it was 0). */
    public publicUrl: string,
    private readonly log: Logger,
    private readonly vaultKey: string | undefined,
    routes: readonly Route[] = ROUTES,
  ) {
    for (const r of routes) {
      // fromBody answers without the full way, where permission rules are checked.
      if (r.fromBody !== undefined && r.permissions.length > 0) throw new Error(`${r.procedure}: a route with permission rules cannot have fromBody`);
    }
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

  dispatch(routeIndex: number, authorization: string, bytes: Uint8Array): DispatchResult {
    const before = commitCount();
    let ctx: RequestCtx | undefined;
    try {
      const { route, validate } = this.compiled[routeIndex] as Compiled;
      // The common refusals (401, 400) are returned, not thrown: V8 computes a message
      // location for every throw under a native callback, which halved their rate.
      const principal = authenticate(authorization);
      if (principal instanceof ApiError) return { reply: this.fail(newRequestId(), principal), wrote: false };
      ctx = new RequestCtx(principal, Date.now(), this.vaultKey);
      // A hot call served from the body draws its request id in the native module.
      const served = route.fromBody?.(bytes, ctx);
      if (served !== undefined) return { reply: { status: 200, body: served.text, headers: undefined }, wrote: commitCount() !== before };
      const input = parseJson(decodeBody(bytes), bytes);
      if (!validate(input)) {
        // At most MAX_REPORTED_ERRORS are listed: a body of many bad items must not make a
        // reply (and a stall) many times its own size.
        const all = validate.errors ?? [];
        const errors = fromAjv(all.slice(0, MAX_REPORTED_ERRORS), route.procedure);
        const more = all.length > MAX_REPORTED_ERRORS ? ` (and ${all.length - MAX_REPORTED_ERRORS} more)` : '';
        return { reply: this.fail(ctx.requestId, new ApiError('invalid_input', `The request body for ${route.procedure} is invalid: ${errors.map((e) => e.message).join('; ')}${more}.`, { errors })), wrote: commitCount() !== before };
      }
      for (const rule of route.permissions) {
        const id = rule.idField === undefined ? undefined : (input as Record<string, unknown>)[rule.idField];
        requirePermission(ctx.principal, rule.resource, typeof id === 'string' ? id : undefined, rule.action);
      }
      const result = route.handler(input as never, ctx);
      let text: string;
      if (result instanceof RawBody) {
        text = result.text;
      } else if (route.list === true) {
        const page = result as ListResult<unknown>;
        text = successBody(ctx.requestId, page.items, { cursor: page.cursor, hasMore: page.hasMore });
      } else {
        text = successBody(ctx.requestId, result);
      }
      return { reply: { status: 200, body: text, headers: undefined }, wrote: commitCount() !== before };
    } catch (err) {
      return { reply: this.fail(ctx?.requestId ?? newRequestId(), err), wrote: commitCount() !== before };
    }
  }

  /** An error reply for a failure outside a procedure (transport errors). */
  error(err: ApiError): Reply {
    return errorReply(newRequestId(), err, this.publicUrl);
  }

  private fail(requestId: string, err: unknown): Reply {
    const mapped = asStorageError(err);
    if (mapped instanceof ApiError) return errorReply(requestId, mapped, this.publicUrl);
    this.log.error('unexpected error', { requestId, error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
    return errorReply(requestId, new ApiError('unexpected_error', `Something went wrong on our side (request ${requestId}); nothing was changed.`), this.publicUrl);
  }
}

/**
 * A request's context. Its id is drawn when first asked for: a hot call answered from the
 * body bytes never asks (its reply carries an id the native module drew).
 */
class RequestCtx implements Ctx {
  private id: string | undefined = undefined;

  constructor(
    readonly principal: Principal,
    readonly nowMs: number,
    readonly vaultKey: string | undefined,
  ) {}

  get requestId(): string {
    return (this.id ??= newRequestId());
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Raw body bytes → string; invalid UTF-8 is a 400, not a replacement character. */
function decodeBody(bytes: Uint8Array): string {
  try {
    return utf8.decode(bytes);
  } catch {
    throw new ApiError('malformed_json', 'The request body is not valid UTF-8.', { errors: [{ location: 'body', message: 'invalid UTF-8' }] });
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
    throw new ApiError('malformed_json', `The request body is nested more than ${MAX_JSON_DEPTH} levels deep.`, { errors: [{ location: 'body', message: `nesting deeper than ${MAX_JSON_DEPTH} levels` }] });
  }
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch (err) {
    if (body.trim() === '') {
      throw new ApiError('malformed_json', 'The request body is empty; send a JSON object.', { errors: [{ location: 'body', message: 'empty body', fix: 'send a JSON object, e.g. {}' }] });
    }
    const why = err instanceof RangeError ? 'it is nested too deeply' : (err as Error).message;
    throw new ApiError('malformed_json', `The request body is not valid JSON: ${why}.`, { errors: [{ location: 'body', message: 'malformed JSON' }] });
  }
  // A \uD800–\uDFFF escape can smuggle an unpaired surrogate into a string, which is not text
  // (it has no UTF-8 form). Only bodies with such an escape are walked.
  if (/\\u[dD][89a-fA-F]/.test(body) && !wellFormed(value)) {
    throw new ApiError('malformed_json', 'The request body contains a string with an unpaired UTF-16 surrogate escape (\\uD800–\\uDFFF); strings must be valid Unicode text.', { errors: [{ location: 'body', message: 'unpaired surrogate in a string' }] });
  }
  return value;
}

function wellFormed(value: unknown): boolean {
  if (typeof value === 'string') return value.isWellFormed();
  if (Array.isArray(value)) return value.every(wellFormed);
  if (typeof value === 'object' && value !== null) return Object.entries(value).every(([k, v]) => k.isWellFormed() && wellFormed(v));
  return true;
}
