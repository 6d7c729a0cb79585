// The tree DuckDB's parser gives a query (json_serialize_sql) as dialect.ts reads, checks
// and rewrites it: its JSON (64-bit integers kept), accessors that refuse a shape DuckDB did
// not promise, builders of the nodes rewrites add, the functions a translated query may call,
// and the types the time rules follow (dialect.ts's module comment says what the rules are).

// ── JSON that keeps DuckDB's 64-bit integers ─────────────────────────────────────────
// json_serialize_sql writes uint64 fields (query_location's "none" is 2^64-1) and the halves
// of HUGEINT constants as plain JSON numbers; JSON.parse would round them, and DuckDB then
// refuses (or, for a constant, silently changes) them. Integers beyond 2^53 are kept as bigint.

export type Json = null | boolean | number | bigint | string | Json[] | Node;
export interface Node {
  [key: string]: Json;
}

export const isObject = (x: Json | undefined): x is Node => typeof x === 'object' && x !== null && !Array.isArray(x);

/** Thrown by parseJson for a tree deeper than it takes. */
export class TooDeep extends Error {}

/** The parser's JSON, its 64-bit integers kept; TooDeep when objects and arrays nest more than `maxDepth` deep. */
export function parseJson(text: string, maxDepth = Infinity): Json {
  let at = 0;
  let depth = 0;
  const token = (re: RegExp): string | undefined => {
    re.lastIndex = at;
    const m = re.exec(text);
    if (m === null) return undefined;
    at = re.lastIndex;
    return m[0];
  };
  const space = (): void => void token(/\s*/y);
  const fail = (): never => {
    throw new Error(`analytics dialect: unreadable parser JSON at ${at}: ${text.slice(at, at + 40)}`);
  };
  const value = (): Json => {
    space();
    const c = text[at];
    if ((c === '{' || c === '[') && ++depth > maxDepth) throw new TooDeep(`deeper than ${maxDepth}`);
    if (c === '{') {
      at++;
      const node: Node = {};
      space();
      if (text[at] === '}') return depth--, at++, node;
      for (;;) {
        space();
        const key = JSON.parse(token(/"(?:[^"\\]|\\.)*"/y) ?? fail()) as string;
        space();
        if (text[at++] !== ':') fail();
        node[key] = value();
        space();
        if (text[at] === '}') return depth--, at++, node;
        if (text[at++] !== ',') fail();
      }
    }
    if (c === '[') {
      at++;
      const items: Json[] = [];
      space();
      if (text[at] === ']') return depth--, at++, items;
      for (;;) {
        items.push(value());
        space();
        if (text[at] === ']') return depth--, at++, items;
        if (text[at++] !== ',') fail();
      }
    }
    if (c === '"') return JSON.parse(token(/"(?:[^"\\]|\\.)*"/y) ?? fail()) as string;
    const literalToken = token(/true|false|null/y);
    if (literalToken !== undefined) return JSON.parse(literalToken) as Json;
    const number = token(/-?\d+(\.\d+)?([eE][+-]?\d+)?/y) ?? fail();
    const n = Number(number);
    return /^-?\d+$/.test(number) && !Number.isSafeInteger(n) ? BigInt(number) : n;
  };
  const result = value();
  space();
  if (at !== text.length) fail();
  return result;
}

/** A floating-point constant's value (`{type: {id: 'DOUBLE'}, value}`): the parser reads `1000` there as an integer and refuses it. */
const FLOAT_TYPES = new Set(['DOUBLE', 'FLOAT']);
const isFloatValue = (x: Node): boolean => isObject(x.type) && FLOAT_TYPES.has(String(x.type.id)) && typeof x.value === 'number' && Number.isInteger(x.value) && Math.abs(x.value) < 1e21;

/** JSON text; `withoutLocations` leaves out query_location, for comparing nodes wherever they stood in the text. */
export function stringifyJson(x: Json, withoutLocations = false): string {
  if (typeof x === 'bigint') return x.toString();
  if (Array.isArray(x)) return `[${x.map((v) => stringifyJson(v, withoutLocations)).join(',')}]`;
  if (isObject(x)) {
    const entries = Object.entries(x).filter(([k]) => !(withoutLocations && k === 'query_location'));
    // 1e3 is 1000.0 in the parser's JSON and 1000 once read: written back with its point.
    const float = isFloatValue(x);
    const written = (k: string, v: Json): string => (float && k === 'value' ? `${JSON.stringify(v)}.0` : stringifyJson(v, withoutLocations));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${written(k, v)}`).join(',')}}`;
  }
  return JSON.stringify(x);
}

export const canonical = (x: Json): string => stringifyJson(x, true);

// Accessors for the parser's format: a mismatch is DuckDB's format changing, not the user's doing.
export function shape(): never {
  throw new Error('analytics dialect: unexpected DuckDB AST shape');
}
export const object = (x: Json | undefined): Node => (isObject(x) ? x : shape());
export const array = (x: Json | undefined): Json[] => (Array.isArray(x) ? x : shape());
export const string = (x: Json | undefined): string => (typeof x === 'string' ? x : shape());
export const present = (x: Json | undefined): boolean => x !== null && x !== undefined;

// ── the functions a translated query may call ─────────────────────────────────────────

/** Operators, as the parser names them (also FUNCTION nodes, with is_operator). */
export const OPERATORS = new Set(['+', '-', '*', '/', '//', '%', '**', '^', '||', '~~', '!~~', '~~*', '!~~*', '~~~', '!~~~']);

/**
 * Every DuckDB function a translated query may call: those a query may write as they are,
 * the targets of the rewrites, and what the parser itself produces (count_star for count(*),
 * to_days / trunc for INTERVAL 7 DAY, row for a lambda's parameters).
 */
const DUCKDB_FUNCTIONS = [
  ...OPERATORS,
  // aggregates
  'count', 'count_star', 'sum', 'avg', 'min', 'max', 'list', 'median', 'any_value', 'last', 'arg_max', 'arg_min',
  // windows
  'row_number', 'rank', 'dense_rank', 'percent_rank', 'cume_dist', 'ntile', 'lag', 'lead', 'first_value', 'last_value', 'nth_value',
  // strings
  'lower', 'upper', 'concat', 'substring', 'substr', 'length', 'len', 'trim', 'ltrim', 'rtrim', 'starts_with', 'ends_with', 'strpos', 'replace',
  'regexp_matches', 'string_split',
  // numbers and conditionals
  'round', 'floor', 'ceil', 'ceiling', 'abs', 'sqrt', 'pow', 'least', 'greatest', 'nullif',
  // time
  'now', 'timezone', 'date_trunc', 'date_part', 'date_diff', 'time_bucket', 'epoch_ms', 'make_timestamp', 'strftime', 'trunc',
  'to_years', 'to_quarters', 'to_months', 'to_weeks', 'to_days', 'to_hours', 'to_minutes', 'to_seconds', 'to_milliseconds', 'to_microseconds',
  // lists
  'list_value', 'list_extract', 'list_contains', 'list_has_any', 'list_has_all', 'list_filter', 'list_transform', 'unnest', 'row', 'flatten',
  // quantiles, and the rate-limit rollups' latency states (schema.ts: the kw_ macros, and struct_pack for latency_avg)
  'quantile_cont', 'quantile_disc', 'kw_points', 'kw_avg_merge', 'kw_quantiles', 'struct_pack',
] as const;
export type DuckFunction = (typeof DUCKDB_FUNCTIONS)[number];
export const DUCKDB_ALLOWED = new Set<string>(DUCKDB_FUNCTIONS);
export const WINDOW_FUNCTIONS = new Set(['count', 'count_star', 'sum', 'avg', 'min', 'max', 'row_number', 'rank', 'dense_rank', 'percent_rank', 'cume_dist', 'ntile', 'lag', 'lead', 'first_value', 'last_value', 'nth_value']);

// ── building nodes (DuckDB 1.5's serialization, every field present) ─────────────────

/** optional_idx's "none": no position in the query's text. */
const NOWHERE = 18446744073709551615n;

export function fn(name: DuckFunction, ...children: Node[]): Node {
  return { class: 'FUNCTION', type: 'FUNCTION', alias: '', query_location: NOWHERE, function_name: name, schema: '', children, filter: null, order_bys: { type: 'ORDER_MODIFIER', orders: [] }, distinct: false, is_operator: OPERATORS.has(name), export_state: false, catalog: '' };
}
export function constant(id: 'VARCHAR' | 'INTEGER' | 'DOUBLE', value: string | number): Node {
  return { class: 'CONSTANT', type: 'VALUE_CONSTANT', alias: '', query_location: NOWHERE, value: { type: { id, type_info: null }, is_null: false, value } };
}
export const text = (s: string): Node => constant('VARCHAR', s);
export function compare(type: 'COMPARE_EQUAL' | 'COMPARE_GREATERTHAN', left: Node, right: Node): Node {
  return { class: 'COMPARISON', type, alias: '', query_location: NOWHERE, left, right };
}
export const int = (n: number): Node => constant('INTEGER', n);
/** The SQL types a rewrite casts to. */
export type CastType = 'DATE' | 'TIMESTAMP' | 'VARCHAR' | 'TINYINT' | 'SMALLINT' | 'INTEGER' | 'BIGINT' | 'HUGEINT' | 'UTINYINT' | 'USMALLINT' | 'UINTEGER' | 'UBIGINT' | 'FLOAT' | 'DOUBLE';
export function cast(child: Node, id: CastType): Node {
  return { class: 'CAST', type: 'OPERATOR_CAST', alias: '', query_location: NOWHERE, child, cast_type: { id, type_info: null }, try_cast: false };
}
export function caseWhen(checks: readonly (readonly [Node, Node])[], otherwise: Node): Node {
  return { class: 'CASE', type: 'CASE_EXPR', alias: '', query_location: NOWHERE, case_checks: checks.map(([when_expr, then_expr]) => ({ when_expr, then_expr })), else_expr: otherwise };
}
export function coalesce(...children: Node[]): Node {
  return { class: 'OPERATOR', type: 'OPERATOR_COALESCE', alias: '', query_location: NOWHERE, children };
}
export function and(a: Json, b: Node): Node {
  return a === null ? b : { class: 'CONJUNCTION', type: 'CONJUNCTION_AND', alias: '', query_location: NOWHERE, children: [object(a), b] };
}
export function columnRef(...names: string[]): Node {
  return { class: 'COLUMN_REF', type: 'COLUMN_REF', alias: '', query_location: NOWHERE, column_names: names };
}
export function subqueryRef(node: Node, alias: string, columnAliases: Json): Node {
  return { type: 'SUBQUERY', alias, sample: null, query_location: NOWHERE, subquery: { node, named_param_map: [] }, column_name_alias: columnAliases };
}
export function crossJoin(left: Node, right: Node): Node {
  return { type: 'JOIN', alias: '', sample: null, query_location: NOWHERE, left, right, condition: null, join_type: 'INNER', ref_type: 'CROSS', using_columns: [], delim_flipped: false, duplicate_eliminated_columns: [] };
}
export function selectNode(selectList: Node[]): Node {
  return {
    type: 'SELECT_NODE', modifiers: [], cte_map: { map: [] }, select_list: selectList, from_table: { type: 'EMPTY', alias: '', sample: null, query_location: NOWHERE },
    where_clause: null, group_expressions: [], group_sets: [], aggregate_handling: 'STANDARD_HANDLING', having: null, sample: null, qualify: null,
  };
}
/** The rewrite of `like` carrying its alias (a select-list item keeps its name), which leaves `like` if it is now nested. */
export function aliased(typed: Typed, like: Node): Typed {
  if (typed.node !== like && typeof like.alias === 'string' && like.alias !== '') {
    typed.node.alias = like.alias;
    like.alias = '';
  }
  return typed;
}

// ── types, as far as the time rules need them ──────────────────────────────────────────

/** 'ms': an integer of Unix milliseconds; 'unknown': whatever DuckDB makes of it. */
export type Ty = 'ms' | 'timestamp' | 'date' | 'number' | 'string' | 'bool' | 'interval' | 'unknown';
export interface Typed {
  node: Node;
  ty: Ty;
}
/** Output columns of a query, lowercased, in order (`Columns | undefined` where they cannot be known). */
export type Columns = Map<string, Ty>;

const NUMBER_TYPES = new Set(['TINYINT', 'SMALLINT', 'INTEGER', 'BIGINT', 'HUGEINT', 'UTINYINT', 'USMALLINT', 'UINTEGER', 'UBIGINT', 'UHUGEINT', 'DECIMAL', 'FLOAT', 'DOUBLE']);

export function typeOfSqlType(id: Json | undefined): Ty {
  if (typeof id !== 'string') return 'unknown';
  if (NUMBER_TYPES.has(id)) return 'number';
  if (id === 'DATE') return 'date';
  if (id.startsWith('TIMESTAMP')) return 'timestamp';
  return ({ VARCHAR: 'string', BOOLEAN: 'bool', INTERVAL: 'interval' } as Record<string, Ty>)[id] ?? 'unknown';
}

const isTime = (ty: Ty): boolean => ty === 'timestamp' || ty === 'date';

/** A DateTime argument: integers are Unix milliseconds (module comment). */
export function asTimestamp(x: Typed): Node {
  if (x.ty === 'ms') return fn('epoch_ms', x.node);
  if (x.ty === 'number') return fn('epoch_ms', cast(x.node, 'BIGINT'));
  if (x.ty === 'string') return cast(x.node, 'TIMESTAMP');
  return x.node;
}

/** toDateTime / toDateTime64 / fromUnixTimestamp: a number is seconds; fractions of a second are kept by toDateTime64 only. */
export function fromSeconds(x: Typed, fraction: boolean): Node {
  switch (x.ty) {
    case 'number':
      // Widened before the multiplication: a literal of seconds (1700000000) is an INTEGER, whose product overflows.
      return fn('make_timestamp', fraction ? cast(fn('*', cast(x.node, 'DOUBLE'), int(1_000_000)), 'BIGINT') : fn('*', cast(fn('trunc', x.node), 'BIGINT'), int(1_000_000)));
    case 'ms':
      return fn('epoch_ms', x.node);
    case 'timestamp':
      return fraction ? x.node : fn('date_trunc', text('second'), x.node);
    default: // a Date, a string, or what DuckDB can cast
      return cast(x.node, 'TIMESTAMP');
  }
}

/** The two sides of a comparison made comparable when one is milliseconds and the other a DateTime. */
export function alignTimes(a: Typed, b: Typed): [Typed, Typed] {
  const toMs = (x: Typed): Typed => ({ node: fn('epoch_ms', x.node), ty: 'ms' });
  const toTime = (x: Typed): Typed => ({ node: asTimestamp(x), ty: 'timestamp' });
  if (a.ty === 'ms' && isTime(b.ty)) return [a, toMs(b)];
  if (b.ty === 'ms' && isTime(a.ty)) return [toMs(a), b];
  if (isTime(a.ty) && b.ty === 'number') return [a, toTime(b)];
  if (isTime(b.ty) && a.ty === 'number') return [toTime(a), b];
  return [a, b];
}

/** The result types of native calls the time rules care about (INTERVAL n UNIT parses to to_<unit>(n)). */
export const NATIVE_TYPES: Partial<Record<string, Ty | ((args: Typed[]) => Ty)>> = {
  ...Object.fromEntries(['to_years', 'to_quarters', 'to_months', 'to_weeks', 'to_days', 'to_hours', 'to_minutes', 'to_seconds', 'to_milliseconds', 'to_microseconds'].map((f) => [f, 'interval' as const])),
  ...Object.fromEntries(['count_star', 'length', 'len', 'round', 'floor', 'ceil', 'ceiling', 'abs', 'trunc', 'strpos'].map((f) => [f, 'number' as const])),
  date_trunc: 'timestamp', time_bucket: 'timestamp', timezone: 'timestamp', make_timestamp: 'timestamp', strftime: 'string', lower: 'string', upper: 'string', concat: 'string',
  // epoch_ms goes both ways: milliseconds to TIMESTAMP, TIMESTAMP to milliseconds.
  epoch_ms: (args) => (args[0]?.ty === 'ms' || args[0]?.ty === 'number' ? 'timestamp' : 'ms'),
  any_value: (args) => args[0]?.ty ?? 'unknown',
  least: (args) => args[0]?.ty ?? 'unknown',
  greatest: (args) => args[0]?.ty ?? 'unknown',
};

/**
 * ClickHouse's DateTime ± n (n seconds) and Date ± n (n days), which DuckDB refuses: the
 * number made an interval. Undefined for any other operation.
 */
export function shiftedTime(name: string, args: Typed[]): Typed | undefined {
  if ((name !== '+' && name !== '-') || args.length !== 2) return undefined;
  const [a, b] = args as [Typed, Typed];
  const [time, n] = (a.ty === 'timestamp' || a.ty === 'date') && b.ty === 'number' ? [a, b] : name === '+' && a.ty === 'number' && (b.ty === 'timestamp' || b.ty === 'date') ? [b, a] : [];
  if (time === undefined || n === undefined) return undefined;
  const shifted = fn(name, time.node, time.ty === 'date' ? fn('to_days', cast(n.node, 'INTEGER')) : fn('to_seconds', cast(n.node, 'DOUBLE')));
  return time.ty === 'date' ? { node: cast(shifted, 'DATE'), ty: 'date' } : { node: shifted, ty: 'timestamp' };
}

export function operatorType(name: string, args: Typed[]): Ty {
  const [a, b] = [args[0]?.ty ?? 'unknown', args[1]?.ty ?? 'unknown'];
  if (name === '+' || name === '-') {
    if ((isTime(a) && b === 'interval') || (a === 'interval' && isTime(b))) return 'timestamp';
    if (isTime(a) && isTime(b)) return 'interval';
    if ((a === 'ms' && b === 'number') || (a === 'number' && b === 'ms')) return 'ms';
    if (args.length === 1) return a;
    return a === 'number' && b === 'number' ? 'number' : 'unknown';
  }
  if (name === '||') return 'string';
  if (name.includes('~')) return 'bool';
  return 'number';
}
