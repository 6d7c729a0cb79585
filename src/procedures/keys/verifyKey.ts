import type { RawBody } from '../../domain/rawJson.js';
import { engine, errorCode } from '../../engine/native.js';
import { ApiError, invalidInput } from '../../errors/apiError.js';
import type { Ctx } from '../context.js';
import { hotBody } from '../hotBody.js';

export interface VerifyKeyInput {
  key: string;
  credits?: { cost: number };
  /** `limit` and `duration` come together (schema): an ad-hoc limit for this call. */
  ratelimits?: { name: string; cost: number; limit?: number; duration?: number }[];
  permissions?: string;
}

/** One synchronous native call; refusals are data (valid:false + code), not errors. */
export function verifyKey(input: VerifyKeyInput, ctx: Ctx): RawBody {
  input.ratelimits?.forEach((r, i) => {
    if ((r.limit === undefined) !== (r.duration === undefined)) {
      const missing = r.limit === undefined ? 'limit' : 'duration';
      throw invalidInput(`body.ratelimits[${i}].${missing}`, `is required: an ad-hoc limit needs both limit and duration`, `add '${missing}', or drop both to use the key's stored limit '${r.name}'`);
    }
  });
  const scope = ctx.principal.verifyScope();
  if (scope === null) {
    throw new ApiError('insufficient_permissions', "The root key lacks the permission for this procedure. Missing one of these permissions: 'apis.*.verify_key' or 'apis.<apiId>.verify_key'.");
  }
  const named = input.ratelimits === undefined ? '' : input.ratelimits.map(namedLimit).join('\u001e');
  try {
    return hotBody(engine.verifyKey(ctx.principal.workspaceId, scope, input.key, input.credits?.cost ?? -1, input.permissions ?? null, named, ctx.nowMs, ctx.requestId));
  } catch (err) {
    throw engineError(err);
  }
}

/**
 * The same call read by the engine straight from the body bytes (Route.fromBody); undefined
 * (nothing done) when the body is not in its plain form or the root key holds no verify
 * grant — the full way then validates the body and answers.
 */
export function verifyKeyFromBody(body: Uint8Array, ctx: Ctx): RawBody | undefined {
  const scope = ctx.principal.verifyScope();
  if (scope === null) return undefined;
  let out: string | undefined;
  try {
    out = engine.verifyKeyBody(ctx.principal.workspaceId, scope, body, ctx.nowMs);
  } catch (err) {
    throw engineError(err);
  }
  return out === undefined ? undefined : hotBody(out);
}

/** The engine's coded refusals of a request as API errors; anything else as it is. */
function engineError(err: unknown): unknown {
  const code = errorCode(err);
  const message = (err as Error).message;
  if (code === 'VERIFY_QUERY_SYNTAX') {
    return new ApiError('permissions_query_syntax_error', `The permission query is not valid: ${message}.`, { errors: [{ location: 'body.permissions', message, fix: 'combine permission names with AND, OR and parentheses, e.g. "a AND (b OR c)"' }] });
  }
  if (code === 'VERIFY_UNKNOWN_LIMIT') {
    return new ApiError('precondition_failed', `The rate limit '${message}' was requested but neither the key nor its identity has a limit of that name.`);
  }
  return err;
}

/** The engine's encoding of one `ratelimits` entry (native/src/api.rs verify_key). */
function namedLimit(r: NonNullable<VerifyKeyInput['ratelimits']>[number]): string {
  const head = `${r.name}\u001f${r.cost}`;
  return r.limit === undefined || r.duration === undefined ? head : `${head}\u001f${r.limit}\u001f${r.duration}`;
}
