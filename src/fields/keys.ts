// Field rules shared by createKey, updateKey, rerollKey and the identities procedures that
// JSON Schema cannot express.
import { invalidInput } from '../errors/errors.js';
import { newId } from '../domain/ids.js';
import type { RatelimitDef } from '../store/records.js';

export interface RefillInput {
  interval: 'daily' | 'monthly';
  amount: number;
  refillDay?: number;
}

export interface RatelimitInput {
  name: string;
  limit: number;
  duration: number;
  autoApply: boolean;
}

/** [refillAmount, refillDay] of the credits layout: (−1, 0) for none; monthly defaults to day 1. */
export function refillTuple(refill: RefillInput | undefined | null, location = 'body.credits.refill'): [number, number] {
  if (refill === undefined || refill === null) return [-1, 0];
  if (refill.interval === 'daily') {
    if (refill.refillDay !== undefined) throw invalidInput(`${location}.refillDay`, 'is only allowed with interval "monthly"', 'remove refillDay or use interval "monthly"');
    return [refill.amount, 0];
  }
  return [refill.amount, refill.refillDay ?? 1];
}

/** Named limits; an existing limit of the same name keeps its id. Names are unique. */
export function ratelimitDefs(input: readonly RatelimitInput[], existing: readonly RatelimitDef[], nowMs: number, location = 'body.ratelimits'): RatelimitDef[] {
  const seen = new Set<string>();
  return input.map((r, i) => {
    if (seen.has(r.name)) throw invalidInput(`${location}[${i}].name`, `the name '${r.name}' is used twice`, 'give every limit a unique name');
    seen.add(r.name);
    const id = existing.find((e) => e.name === r.name)?.id ?? newId('rl', nowMs);
    return { id, name: r.name, limit: r.limit, durationMs: r.duration, autoApply: r.autoApply };
  });
}
