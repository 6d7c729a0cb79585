// `meta` of keys and identities: free-form JSON objects, stored as JSON text.
import { invalidInput } from '../errors/errors.js';
import { MAX_IDENTITY_META_BYTES } from '../schemas/identities.js';
import { MAX_META_BYTES } from '../schemas/keys.js';

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

/** An identity's meta → JSON text, at most 1 MiB. */
export function identityMetaJson(meta: Record<string, unknown>): string {
  return metaJson(meta, 'body.meta', MAX_IDENTITY_META_BYTES);
}
