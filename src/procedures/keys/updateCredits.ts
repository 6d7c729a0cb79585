import { invalidInput } from '../../errors/errors.js';
import { deleteCredits, readCredits, writeCredits } from '../../store/keys.js';
import type { Ctx } from '../../request/context.js';
import { keyFor } from '../../lookups/keys.js';
import { creditsView, type CreditsView } from '../../views/keys.js';

export interface UpdateCreditsInput {
  keyId: string;
  operation: 'set' | 'increment' | 'decrement';
  value?: number | null;
}

/**
 * set (null = unlimited), increment, decrement (floors at 0); returns the new balance. `set`
 * needs `value` written out: a request that forgot it must not silently make the key unlimited.
 * In cluster mode an increment or decrement applies to the cluster's balance in PostgreSQL
 * (nodes' leases are not touched, a decrement beyond the balance recalls them), and the
 * reply is this node's best knowledge of the balance after it.
 */
export async function updateCredits(input: UpdateCreditsInput, ctx: Ctx): Promise<CreditsView> {
  if (input.operation === 'set' && input.value === undefined) throw invalidInput('body.value', 'is required for set', 'send a whole number ≥ 0, or null to make the key unlimited');
  if (input.operation !== 'set' && ctx.credits !== undefined) {
    const key = keyFor(ctx, input.keyId, 'update_key');
    const value = input.value ?? null;
    if (value === null) throw invalidInput('body.value', `is required for ${input.operation}`, 'send a whole number ≥ 0');
    const limited = readCredits(key.id, ctx.nowMs) !== undefined && (await ctx.credits.adjust(key.id, input.operation === 'increment' ? value : -value));
    if (!limited) throw invalidInput('body.operation', `cannot ${input.operation} a key with unlimited credits`, 'use operation "set" to give the key a balance');
    return creditsView(key.id, ctx.nowMs) ?? { remaining: null };
  }
  return ctx.transact(() => {
    const key = keyFor(ctx, input.keyId, 'update_key');
    const current = readCredits(key.id, ctx.nowMs);
    const value = input.value ?? null;
    if (input.operation === 'set') {
      if (value === null) {
        deleteCredits(key.id);
        return { remaining: null };
      }
      writeCredits(key.id, [value, current?.[1] ?? -1, current?.[2] ?? 0, current?.[3] ?? ctx.nowMs]);
    } else {
      if (value === null) throw invalidInput('body.value', `is required for ${input.operation}`, 'send a whole number ≥ 0');
      if (current === undefined) throw invalidInput('body.operation', `cannot ${input.operation} a key with unlimited credits`, 'use operation "set" to give the key a balance');
      const next = input.operation === 'increment' ? Math.min(current[0] + value, Number.MAX_SAFE_INTEGER) : Math.max(0, current[0] - value);
      writeCredits(key.id, [next, current[1], current[2], current[3]]);
    }
    return creditsView(key.id, ctx.nowMs) ?? { remaining: null };
  });
}
