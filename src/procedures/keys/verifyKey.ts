import { RawJson } from '../../domain/rawJson.js';
import { engine, errorCode } from '../../engine/native.js';
import { ApiError } from '../../errors/apiError.js';
import { noteHotEffect } from '../../store/durability.js';
import type { Ctx } from '../context.js';

export interface VerifyKeyInput {
  key: string;
  credits?: { cost: number };
  ratelimits?: { name: string; cost: number }[];
  permissions?: string;
}

/** One synchronous native call; refusals are data (valid:false + code), not errors. */
export function verifyKey(input: VerifyKeyInput, ctx: Ctx): RawJson {
  const scope = ctx.principal.verifyScope();
  if (scope === null) {
    throw new ApiError('insufficient_permissions', "The root key lacks the permission for this procedure. Missing one of these permissions: 'apis.*.verify_key' or 'apis.<apiId>.verify_key'.");
  }
  const named = input.ratelimits === undefined ? '' : input.ratelimits.map((r) => `${r.name}\u001f${r.cost}`).join('\u001e');
  let out: string;
  try {
    out = engine.verifyKey(ctx.principal.workspaceId, scope, input.key, input.credits?.cost ?? -1, input.permissions ?? null, named, ctx.nowMs);
  } catch (err) {
    const code = errorCode(err);
    const message = (err as Error).message;
    if (code === 'VERIFY_QUERY_SYNTAX') {
      throw new ApiError('permissions_query_syntax_error', `The permission query is not valid: ${message}.`, { errors: [{ location: 'body.permissions', message, fix: 'combine permission names with AND, OR and parentheses, e.g. "a AND (b OR c)"' }] });
    }
    if (code === 'VERIFY_UNKNOWN_LIMIT') {
      throw new ApiError('precondition_failed', `The rate limit '${message}' was requested but neither the key nor its identity has a limit of that name.`);
    }
    throw err;
  }
  noteHotEffect(out.charCodeAt(0));
  return new RawJson(out.slice(1));
}
