// Field rules shared by createKey, updateKey and rerollKey that JSON Schema cannot express.
import { invalidInput } from '../../errors/apiError.js';
import { newId } from '../../domain/ids.js';
import { MAX_META_BYTES } from '../../schemas/keys.js';
import type { RatelimitDef } from '../../store/records.js';

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

/**
 * meta → JSON text of at most `maxBytes` (a key's: 10 KB, the spec's bound). A number too
 * large for a double (JSON.parse reads `1e400` as Infinity, which JSON has no text for) is
 * refused, at its own location, rather than stored as null.
 */
export function metaJson(meta: Record<string, unknown>, location = 'body.meta', maxBytes = MAX_META_BYTES): string {
  const outOfRange = nonFiniteAt(meta, location);
  if (outOfRange !== undefined) throw invalidInput(outOfRange, 'is a number out of range', 'use numbers within ±1.7976931348623157e308');
  const json = JSON.stringify(meta);
  const bytes = Buffer.byteLength(json, 'utf8');
  if (bytes > maxBytes) throw invalidInput(location, `must be at most ${maxBytes} bytes as JSON, got ${bytes}`);
  return json;
}

/** The location (as the validation errors write it) of the first non-finite number in `value`. */
function nonFiniteAt(value: unknown, location: string): string | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? undefined : location;
  if (typeof value !== 'object' || value === null) return undefined;
  const entries: [string, unknown][] = Array.isArray(value) ? value.map((v, i) => [`${location}[${i}]`, v]) : Object.entries(value).map(([k, v]) => [`${location}.${k}`, v]);
  for (const [at, v] of entries) {
    const found = nonFiniteAt(v, at);
    if (found !== undefined) return found;
  }
  return undefined;
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
