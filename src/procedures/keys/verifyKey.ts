import { afterPlaceholder, pendingKey } from '../../edits/migrated.js';
import { errorCode } from '../../engine/native.js';
import type { Outcome, Payment, Served } from '../../engine/hotCalls.js';
import { insufficientPermissions, invalidInput, permissionsQuerySyntax, unknownRateLimit } from '../../errors/errors.js';
import type { Ctx } from '../../request/context.js';
import { servedOrFullWay } from '../../request/settle.js';

export interface VerifyKeyInput {
  key: string;
  credits?: { cost: number };
  /** `limit` and `duration` come together: an ad-hoc limit for this call. */
  ratelimits?: { name: string; cost: number; limit?: number; duration?: number }[];
  permissions?: string;
  tags?: string[];
  migrationId?: string;
}

/**
 * The full way: the validated input handed to the engine; refusals are data (valid:false +
 * code), not errors. In cluster mode, a verification only the cluster can decide (this
 * node's lease of the key's credits cannot pay for it, or a limit is near) is settled with
 * the cluster (a promise).
 */
export function verifyKey(input: VerifyKeyInput, ctx: Ctx): Served | Promise<Served> {
  input.ratelimits?.forEach((r, i) => {
    if ((r.limit === undefined) !== (r.duration === undefined)) {
      const missing = r.limit === undefined ? 'limit' : 'duration';
      throw invalidInput(`body.ratelimits[${i}].${missing}`, `is required: an ad-hoc limit needs both limit and duration`, `add '${missing}', or drop both to use the key's stored limit '${r.name}'`);
    }
  });
  const scope = ctx.principal.verifyScope();
  if (scope === null) throw insufficientPermissions(['apis.*.verify_key', 'apis.<apiId>.verify_key']);
  const { migrationId, ...engineInput } = input;
  const request = Buffer.from(JSON.stringify(engineInput));
  const under = (keyHash?: Buffer) => (payment?: Payment): Outcome => {
    try {
      return ctx.hot.verifyKey(request, ctx.principal.workspaceId, scope, ctx.nowMs, true, payment, keyHash);
    } catch (err) {
      throw refusalAsError(err);
    }
  };
  const again = under();
  const pending = migrationId === undefined ? undefined : pendingKey(migrationId, input.key, ctx);
  if (pending === undefined) return ctx.settle(again(), again);
  const atPlaceholder = under(pending.placeholder);
  return Promise.resolve(ctx.settle(atPlaceholder(), atPlaceholder)).then((served) => afterPlaceholder(pending, served, ctx, () => ctx.settle(again(), again)));
}

/**
 * Straight from the body bytes (Route.fromBody); undefined (nothing done) when the engine
 * declines them, needs the cluster, or the root key holds no verify grant — the full way then
 * validates the body and answers.
 */
export function verifyKeyFromBody(body: Uint8Array, ctx: Ctx): Served | undefined {
  const scope = ctx.principal.verifyScope();
  if (scope === null) return undefined;
  try {
    return servedOrFullWay(ctx.hot.verifyKey(body, ctx.principal.workspaceId, scope, ctx.nowMs, false));
  } catch (err) {
    throw refusalAsError(err);
  }
}

/** The engine's coded refusals of a request as API errors; anything else as it is. */
function refusalAsError(err: unknown): unknown {
  const code = errorCode(err);
  if (code === 'VERIFY_QUERY_SYNTAX') return permissionsQuerySyntax((err as Error).message);
  if (code === 'VERIFY_UNKNOWN_LIMIT') return unknownRateLimit((err as Error).message);
  return err;
}
