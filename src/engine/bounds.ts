// The bounds the hot calls' body readers check (native/src/body.rs BOUNDS) have one source of
// truth each side, and must agree with the procedures' request schemas (src/schemas), which
// ajv validates the full way with: a body the reader accepts must be one ajv accepts, read to
// the same values. The dispatcher checks them at start-up (and refuses to start when they
// differ, e.g. a native module built from other sources); test/engine/contract.test.ts too.
import { native } from './native.js';

/** One bound as the engine reports it: `path` names properties and `items` from the request schema's root. */
export interface HotBound {
  procedure: string;
  path: string;
  kind: 'text' | 'int' | 'items';
  min: number;
  max: number;
  /** text: no control character (the schema's pattern `^[^\u0000-\u001f]+$`). */
  printable?: boolean;
}

const PRINTABLE = '^[^\\u0000-\\u001f]+$';

export function engineBounds(): HotBound[] {
  return JSON.parse(native.hotBounds()) as HotBound[];
}

/** The sub-schema at `path` ('' is the root; segments are property names or `items`). */
function at(schema: Record<string, unknown>, path: string): Record<string, unknown> | undefined {
  let node: unknown = schema;
  for (const segment of path === '' ? [] : path.split('/')) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = segment === 'items' ? Reflect.get(node, 'items') : Reflect.get(Reflect.get(node, 'properties') ?? {}, segment);
  }
  return typeof node === 'object' && node !== null ? (node as Record<string, unknown>) : undefined;
}

/**
 * Where the engine's bounds and the request schemas differ, one line each: every bound must
 * match its schema node, and every hot procedure named by a bound must have a schema here.
 */
export function boundsMismatches(bounds: readonly HotBound[], schemas: ReadonlyMap<string, Record<string, unknown>>): string[] {
  const out: string[] = [];
  for (const b of bounds) {
    const schema = schemas.get(b.procedure);
    const node = schema === undefined ? undefined : at(schema, b.path);
    const where = `${b.procedure} ${b.path === '' ? '(the body)' : b.path}`;
    if (node === undefined) {
      out.push(`${where}: no such schema node`);
      continue;
    }
    const [type, lo, hi, want] =
      b.kind === 'text' ? ['string', 'minLength', 'maxLength', b.min] : b.kind === 'int' ? ['integer', 'minimum', 'maximum', b.min] : ['array', 'minItems', 'maxItems', b.min];
    if (node.type !== type) out.push(`${where}: the schema's type is ${String(node.type)}, the engine reads ${type}`);
    if ((node[lo] ?? 0) !== want) out.push(`${where}: ${lo} ${String(node[lo] ?? 0)} in the schema, ${b.min} in the engine`);
    if (node[hi] !== b.max) out.push(`${where}: ${hi} ${String(node[hi])} in the schema, ${b.max} in the engine`);
    if (b.kind === 'text' && (node.pattern === PRINTABLE) !== (b.printable === true)) out.push(`${where}: pattern ${String(node.pattern)} in the schema, printable=${String(b.printable)} in the engine`);
    if (b.kind === 'text' && node.pattern !== undefined && node.pattern !== PRINTABLE) out.push(`${where}: the schema has a pattern the engine does not check`);
  }
  return out;
}
