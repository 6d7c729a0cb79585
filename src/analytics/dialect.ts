// Unkey's analytics SQL (ClickHouse's dialect, docs/product/platform/analytics/*.mdx) read
// into a DuckDB query confined to a root key's scope, or refused with the 400 that names
// what is wrong. Checks and rewrites never look at the query's text (only the wording of a
// parse error does, and fill.ts, which cuts an outer ORDER BY … WITH FILL out of it before
// it comes here and wraps what this returns): DuckDB parses it (json_serialize_sql), the tree is checked and
// rewritten, and DuckDB prints it back (json_deserialize_sql). The contract, rule by rule:
//
//  - one statement, a SELECT (set operations, CTEs and subqueries included), else
//    invalid_analytics_query_type; what does not parse is invalid_analytics_query, with the
//    ClickHouse-only syntax named when that is the cause (WITH FILL, LIMIT … BY, …);
//  - tables: only the public tables of the scope's kind, and CTEs of an enclosing WITH, else
//    invalid_analytics_table. Each public table becomes, in the tree, a subquery of
//    publicSelect() filtered to the scope, aliased as the user's alias or the table's name.
//    CTEs are renamed to names no query can spell, so a reference resolves to exactly the CTE
//    this module decided on, whatever DuckDB's own visibility rules are;
//  - functions: an allowlist. ClickHouse names are rewritten to DuckDB (CLICKHOUSE below),
//    DuckDB names on DUCKDB_FUNCTIONS pass as they are, anything else is
//    invalid_analytics_function. The parser lowercases function names, so ClickHouse's
//    case-sensitive names (countIf) are matched case-insensitively;
//  - every object of the tree is visited and any node kind this module does not know is
//    refused: a newer DuckDB that adds a clause gets a 400, not an unchecked pass;
//  - a select-list item without an alias is named as ClickHouse names it (`count()`,
//    `countIf(equals(outcome, 'VALID'))`, clickhouseName), so that rows read the same as
//    Unkey's; this reads the query's text, for the spelling of function names, which the
//    parser lowercases (the checks still never do);
//  - last, the SQL about to be returned is parsed again and checked on its own
//    (assertConfined): stored tables appear only as the FROM of a scope-filtered public
//    SELECT, and only allowed functions are called. A failure there is a bug (here or in
//    DuckDB's printer) and throws a plain Error, never runs.
//
// Time. Raw tables keep `time` as Int64 Unix milliseconds; rollups as TIMESTAMP (minute,
// hour) or DATE (day, month). ClickHouse compares an Int64 with a DateTime as plain numbers,
// which makes Unkey's own `WHERE time >= now() - INTERVAL 1 DAY` on a raw table match every
// row; keyward reads it as meant. The rule: an integer that meets a DateTime is Unix
// milliseconds. So a comparison of a millisecond column (raw `time`, `reset_at`,
// toUnixTimestamp64Milli(…)) with a DateTime compares milliseconds; a number compared with a
// DateTime or Date (`time >= 1704067200000` on a rollup) is read as milliseconds; and the
// DateTime functions (toStartOfHour, toDate, formatDateTime, date_trunc, …) read an integer
// argument as milliseconds where ClickHouse would refuse it. The exceptions are the functions
// ClickHouse defines on seconds, toDateTime / toDateTime64 / fromUnixTimestamp of a number
// (`toDateTime(time / 1000)`, as the docs write it); given a millisecond column itself they
// read milliseconds too. now() is UTC, as Unkey's servers are, whatever DuckDB's TimeZone.
import { publicSelect, RATELIMIT_TABLES, VERIFICATION_TABLES, type PublicTable } from './schema.js';
import { unparametric } from './parametric.js';
import { invalidAnalyticsFunction, invalidAnalyticsQuery, invalidAnalyticsQueryType, invalidAnalyticsTable } from '../errors/errors.js';

export interface Scope {
  workspaceId: string;
  /** 'verifications': key_verifications_* tables only; 'ratelimits': ratelimits_* tables only. */
  kind: 'verifications' | 'ratelimits';
  /** undefined: every key space / namespace of the workspace; else only these ids (key_space_id / namespace_id); [] reads nothing. */
  ids?: readonly string[];
}

/** DuckDB's parser, on a connection of the caller's: json_serialize_sql and json_deserialize_sql, their JSON as text. */
export interface SqlParser {
  serialize(sql: string): Promise<string>;
  deserialize(astJson: string): Promise<string>;
}

/**
 * The DuckDB SQL that answers `query` within `scope`, or throws the 400 ApiError that says
 * why not (a plain Error only for a bug the final check caught). Four parser round trips:
 * the query, the scope's public SELECTs (all five in one; none when `views` has them from an
 * earlier query of the same scope), the printing, the final check.
 */
export async function translate(query: string, scope: Scope, parser: SqlParser, views: PublicViews = new PublicViews()): Promise<string> {
  // One after the other: the caller's connection runs one statement at a time.
  const text = unparametric(query);
  const parsed = await parser.serialize(text);
  const publics = await views.of(scope, parser);
  try {
    const node = new Translation(scope.kind, publics, Buffer.from(text, 'utf8')).query(userStatement(parseJson(parsed), text), ROOT);
    const sql = await parser.deserialize(stringifyJson({ error: false, statements: [{ node, named_param_map: [] }] }));
    assertConfined(parseJson(await parser.serialize(sql)), publics);
    return sql;
  } catch (err) {
    // The walks recurse as deep as the query nests; DuckDB's parser bounds that, but close to the stack's size.
    if (err instanceof RangeError) throw invalidAnalyticsQuery('it is nested too deeply', 'flatten its subqueries and expressions');
    throw err;
  }
}

// ── the scope ─────────────────────────────────────────────────────────────────────────

/** A string as a SQL literal: quotes doubled (DuckDB's strings know no backslash escapes). */
const literal = (s: string): string => `'${s.replaceAll("'", "''")}'`;

/** The WHERE of every public table's SELECT: the workspace, and the ids when the key is scoped to some. */
function scopeCondition(scope: Scope): string {
  const workspace = `workspace_id = ${literal(scope.workspaceId)}`;
  if (scope.ids === undefined) return workspace;
  // Not `false`: DuckDB prints a boolean constant as a cast, which would not compare equal in assertConfined.
  if (scope.ids.length === 0) return `${workspace} AND 1 = 0`;
  return `${workspace} AND ${scope.kind === 'verifications' ? 'key_space_id' : 'namespace_id'} IN (${scope.ids.map(literal).join(', ')})`;
}

/**
 * The public tables' parsed SELECTs of the scopes queried lately, so that a scope's are
 * parsed once (a round trip to the parser and reading some 80 KB of its JSON: most of a
 * small query's cost). What it hands out is never changed: a query's tree gets clones.
 */
export class PublicViews {
  private readonly byScope = new Map<string, ReadonlyMap<string, PublicView>>();

  constructor(private readonly capacity = 256) {}

  async of(scope: Scope, parser: SqlParser): Promise<ReadonlyMap<string, PublicView>> {
    const key = JSON.stringify([scope.kind, scope.workspaceId, scope.ids ?? null]);
    const kept = this.byScope.get(key);
    if (kept !== undefined) return kept;
    const tables = scope.kind === 'verifications' ? VERIFICATION_TABLES : RATELIMIT_TABLES;
    const views = publicViews(tables, parseJson(await parser.serialize(tables.map((t) => publicSelect(t, scopeCondition(scope))).join(';\n'))));
    if (this.byScope.size >= this.capacity) this.byScope.clear();
    this.byScope.set(key, views);
    return views;
  }
}

interface PublicView {
  /** publicSelect's SELECT_NODE, cloned into the tree at each reference. */
  node: Node;
  columns: Columns;
}

/** The parsed public SELECTs by table name; their columns are the public table's. */
function publicViews(tables: readonly PublicTable[], parsed: Json): Map<string, PublicView> {
  const statements = isObject(parsed) && parsed.error === false && Array.isArray(parsed.statements) ? parsed.statements : [];
  if (statements.length !== tables.length) throw new Error(`analytics dialect: the public tables' SELECTs did not parse: ${stringifyJson(parsed).slice(0, 300)}`);
  return new Map(
    tables.map((table, i) => {
      const node = object(object(statements[i]).node);
      const columns: Columns = new Map();
      for (const item of array(node.select_list)) {
        const e = object(item);
        const name = e.alias !== '' ? string(e.alias) : string(array(e.column_names).at(-1));
        columns.set(name.toLowerCase(), publicColumnType(table, name));
      }
      return [table, { node, columns }];
    }),
  );
}

/** The types the time rules (and avg of a Bool) need; the rest is left to DuckDB. */
function publicColumnType(table: PublicTable, column: string): Ty {
  if (table === 'ratelimits_v1' && column === 'passed') return 'bool';
  if (column === 'time') return !table.includes('_per_') ? 'ms' : /_per_(minute|hour)_/.test(table) ? 'timestamp' : 'date';
  return column === 'reset_at' ? 'ms' : 'unknown';
}

// ── the statement ─────────────────────────────────────────────────────────────────────

/**
 * The one SELECT of json_serialize_sql's answer, or the 400 of rule 1. A parse error's
 * position is only used to name the ClickHouse syntax that caused it.
 */
function userStatement(parsed: Json, query: string): Node {
  const result = object(parsed);
  if (result.error === true) {
    // DuckDB's hints on settings (`Use "SET max_expression_depth TO x"`) name what a query cannot change.
    const message = typeof result.error_message === 'string' ? result.error_message.replace(/\s*Use "SET [^"]*"[^.]*\.+/g, '').replace(/\.+$/, '') : 'it does not parse';
    if (/only select statements/i.test(message)) {
      throw invalidAnalyticsQueryType('the query holds a statement that is not a SELECT (INSERT, UPDATE, DELETE, CREATE, ATTACH, COPY, PRAGMA, SET, EXPLAIN, …)');
    }
    if (result.error_type !== 'parser') throw invalidAnalyticsQuery(message);
    const position = Number(result.position ?? NaN);
    const clickhouse = Number.isInteger(position) ? clickhouseSyntax(query.slice(0, position), query.slice(position)) : undefined;
    if (clickhouse !== undefined) throw invalidAnalyticsQuery(`ClickHouse's ${clickhouse.syntax} is not supported (${message}); ${clickhouse.fix}`, clickhouse.fix);
    throw invalidAnalyticsQuery(`it does not parse: ${message}${Number.isInteger(position) ? ` (character ${position})` : ''}`);
  }
  const statements = array(result.statements);
  if (statements.length === 0) throw invalidAnalyticsQuery('the query is empty', 'send one SELECT');
  if (statements.length > 1) throw invalidAnalyticsQueryType(`the query holds ${statements.length} statements; send exactly one SELECT`);
  const statement = object(statements[0]);
  if (array(statement.named_param_map).length > 0) throw invalidAnalyticsQuery('named parameters are not supported', 'write the values into the query');
  return object(statement.node);
}

/** ClickHouse syntax DuckDB's parser stops at, by what comes just before / at the error. */
const CLICKHOUSE_SYNTAX: readonly { syntax: string; fix: string; test(before: string, after: string): boolean }[] = [
  { syntax: 'ORDER BY … WITH FILL inside a subquery', fix: 'fill the outer query\'s ORDER BY (fill.ts takes WITH FILL there only)', test: (_, after) => /^WITH\s+FILL\b/i.test(after) },
  { syntax: 'LIMIT … BY', fix: 'use row_number() OVER (PARTITION BY …) in a subquery', test: (before, after) => /^BY\b/i.test(after) && /\bLIMIT\b[^;]*$/i.test(before) },
  { syntax: 'parametric aggregate syntax f(params)(args) (quantile, quantilesTDigestMerge, …)', fix: 'use median(x), or aggregate without parameters', test: (before, after) => after.startsWith('(') && /\)\s*$/.test(before) },
  { syntax: 'ARRAY JOIN clause', fix: 'use arrayJoin(array) in the SELECT list', test: (_, after) => /^ARRAY\s+JOIN\b/i.test(after) },
  { syntax: 'SETTINGS clause', fix: 'drop it: query limits are set by keyward', test: (before) => /\bSETTINGS\s*$/i.test(before) },
  { syntax: 'FORMAT clause', fix: 'drop it: results are JSON', test: (before) => /\bFORMAT\s*$/i.test(before) },
  { syntax: 'PREWHERE clause', fix: 'use WHERE', test: (before) => /\bPREWHERE\s*$/i.test(before) },
  { syntax: 'GLOBAL IN / GLOBAL JOIN', fix: 'drop GLOBAL', test: (_, after) => /^GLOBAL\b/i.test(after) },
  { syntax: 'any() aggregate (a reserved word in DuckDB)', fix: 'use any_value(x)', test: (_, after) => /^any\s*\(/i.test(after) },
  { syntax: 'GROUP BY … WITH TOTALS / ROLLUP / CUBE modifier', fix: 'drop it, and compute the totals in a second query or with GROUP BY ROLLUP (…)', test: (before, after) => /^WITH\b/i.test(after) && /\bGROUP\s+BY\b[^;]*$/i.test(before) },
  { syntax: 'SELECT * EXCEPT (columns)', fix: 'use SELECT * EXCLUDE (columns)', test: (before) => /\*\s*EXCEPT\s*\(\s*$/i.test(before) },
];

function clickhouseSyntax(before: string, after: string): { syntax: string; fix: string } | undefined {
  return CLICKHOUSE_SYNTAX.find((s) => s.test(before, after));
}

// ── JSON that keeps DuckDB's 64-bit integers ─────────────────────────────────────────
// json_serialize_sql writes uint64 fields (query_location's "none" is 2^64-1) and the halves
// of HUGEINT constants as plain JSON numbers; JSON.parse would round them, and DuckDB then
// refuses (or, for a constant, silently changes) them. Integers beyond 2^53 are kept as bigint.

type Json = null | boolean | number | bigint | string | Json[] | Node;
interface Node {
  [key: string]: Json;
}

const isObject = (x: Json | undefined): x is Node => typeof x === 'object' && x !== null && !Array.isArray(x);

function parseJson(text: string): Json {
  let at = 0;
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
    if (c === '{') {
      at++;
      const node: Node = {};
      space();
      if (text[at] === '}') return at++, node;
      for (;;) {
        space();
        const key = JSON.parse(token(/"(?:[^"\\]|\\.)*"/y) ?? fail()) as string;
        space();
        if (text[at++] !== ':') fail();
        node[key] = value();
        space();
        if (text[at] === '}') return at++, node;
        if (text[at++] !== ',') fail();
      }
    }
    if (c === '[') {
      at++;
      const items: Json[] = [];
      space();
      if (text[at] === ']') return at++, items;
      for (;;) {
        items.push(value());
        space();
        if (text[at] === ']') return at++, items;
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
function stringifyJson(x: Json, withoutLocations = false): string {
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

const canonical = (x: Json): string => stringifyJson(x, true);

// Accessors for the parser's format: a mismatch is DuckDB's format changing, not the user's doing.
function shape(): never {
  throw new Error('analytics dialect: unexpected DuckDB AST shape');
}
const object = (x: Json | undefined): Node => (isObject(x) ? x : shape());
const array = (x: Json | undefined): Json[] => (Array.isArray(x) ? x : shape());
const string = (x: Json | undefined): string => (typeof x === 'string' ? x : shape());
const present = (x: Json | undefined): boolean => x !== null && x !== undefined;

// ── building nodes (DuckDB 1.5's serialization, every field present) ─────────────────

/** optional_idx's "none": no position in the query's text. */
const NOWHERE = 18446744073709551615n;

function fn(name: DuckFunction, ...children: Node[]): Node {
  return { class: 'FUNCTION', type: 'FUNCTION', alias: '', query_location: NOWHERE, function_name: name, schema: '', children, filter: null, order_bys: { type: 'ORDER_MODIFIER', orders: [] }, distinct: false, is_operator: OPERATORS.has(name), export_state: false, catalog: '' };
}
function constant(id: 'VARCHAR' | 'INTEGER' | 'DOUBLE', value: string | number): Node {
  return { class: 'CONSTANT', type: 'VALUE_CONSTANT', alias: '', query_location: NOWHERE, value: { type: { id, type_info: null }, is_null: false, value } };
}
const text = (s: string): Node => constant('VARCHAR', s);
function compare(type: 'COMPARE_EQUAL' | 'COMPARE_GREATERTHAN', left: Node, right: Node): Node {
  return { class: 'COMPARISON', type, alias: '', query_location: NOWHERE, left, right };
}
const int = (n: number): Node => constant('INTEGER', n);
/** The SQL types a rewrite casts to. */
type CastType = 'DATE' | 'TIMESTAMP' | 'VARCHAR' | 'TINYINT' | 'SMALLINT' | 'INTEGER' | 'BIGINT' | 'HUGEINT' | 'UTINYINT' | 'USMALLINT' | 'UINTEGER' | 'UBIGINT' | 'FLOAT' | 'DOUBLE';
function cast(child: Node, id: CastType): Node {
  return { class: 'CAST', type: 'OPERATOR_CAST', alias: '', query_location: NOWHERE, child, cast_type: { id, type_info: null }, try_cast: false };
}
function caseWhen(checks: readonly (readonly [Node, Node])[], otherwise: Node): Node {
  return { class: 'CASE', type: 'CASE_EXPR', alias: '', query_location: NOWHERE, case_checks: checks.map(([when_expr, then_expr]) => ({ when_expr, then_expr })), else_expr: otherwise };
}
function coalesce(...children: Node[]): Node {
  return { class: 'OPERATOR', type: 'OPERATOR_COALESCE', alias: '', query_location: NOWHERE, children };
}
function and(a: Json, b: Node): Node {
  return a === null ? b : { class: 'CONJUNCTION', type: 'CONJUNCTION_AND', alias: '', query_location: NOWHERE, children: [object(a), b] };
}
function columnRef(...names: string[]): Node {
  return { class: 'COLUMN_REF', type: 'COLUMN_REF', alias: '', query_location: NOWHERE, column_names: names };
}
function subqueryRef(node: Node, alias: string, columnAliases: Json): Node {
  return { type: 'SUBQUERY', alias, sample: null, query_location: NOWHERE, subquery: { node, named_param_map: [] }, column_name_alias: columnAliases };
}
function crossJoin(left: Node, right: Node): Node {
  return { type: 'JOIN', alias: '', sample: null, query_location: NOWHERE, left, right, condition: null, join_type: 'INNER', ref_type: 'CROSS', using_columns: [], delim_flipped: false, duplicate_eliminated_columns: [] };
}
function selectNode(selectList: Node[]): Node {
  return {
    type: 'SELECT_NODE', modifiers: [], cte_map: { map: [] }, select_list: selectList, from_table: { type: 'EMPTY', alias: '', sample: null, query_location: NOWHERE },
    where_clause: null, group_expressions: [], group_sets: [], aggregate_handling: 'STANDARD_HANDLING', having: null, sample: null, qualify: null,
  };
}
/** The rewrite of `like` carrying its alias (a select-list item keeps its name), which leaves `like` if it is now nested. */
function aliased(typed: Typed, like: Node): Typed {
  if (typed.node !== like && typeof like.alias === 'string' && like.alias !== '') {
    typed.node.alias = like.alias;
    like.alias = '';
  }
  return typed;
}
// ── types, as far as the time rules need them ──────────────────────────────────────────

/** 'ms': an integer of Unix milliseconds; 'unknown': whatever DuckDB makes of it. */
type Ty = 'ms' | 'timestamp' | 'date' | 'number' | 'string' | 'bool' | 'interval' | 'unknown';
interface Typed {
  node: Node;
  ty: Ty;
}
/** Output columns of a query, lowercased, in order (`Columns | undefined` where they cannot be known). */
type Columns = Map<string, Ty>;

const NUMBER_TYPES = new Set(['TINYINT', 'SMALLINT', 'INTEGER', 'BIGINT', 'HUGEINT', 'UTINYINT', 'USMALLINT', 'UINTEGER', 'UBIGINT', 'UHUGEINT', 'DECIMAL', 'FLOAT', 'DOUBLE']);

function typeOfSqlType(id: Json | undefined): Ty {
  if (typeof id !== 'string') return 'unknown';
  if (NUMBER_TYPES.has(id)) return 'number';
  if (id === 'DATE') return 'date';
  if (id.startsWith('TIMESTAMP')) return 'timestamp';
  return ({ VARCHAR: 'string', BOOLEAN: 'bool', INTERVAL: 'interval' } as Record<string, Ty>)[id] ?? 'unknown';
}

const isTime = (ty: Ty): boolean => ty === 'timestamp' || ty === 'date';

/** A DateTime argument: integers are Unix milliseconds (module comment). */
function asTimestamp(x: Typed): Node {
  if (x.ty === 'ms') return fn('epoch_ms', x.node);
  if (x.ty === 'number') return fn('epoch_ms', cast(x.node, 'BIGINT'));
  if (x.ty === 'string') return cast(x.node, 'TIMESTAMP');
  return x.node;
}

/** toDateTime / toDateTime64 / fromUnixTimestamp: a number is seconds; fractions of a second are kept by toDateTime64 only. */
function fromSeconds(x: Typed, fraction: boolean): Node {
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
function alignTimes(a: Typed, b: Typed): [Typed, Typed] {
  const toMs = (x: Typed): Typed => ({ node: fn('epoch_ms', x.node), ty: 'ms' });
  const toTime = (x: Typed): Typed => ({ node: asTimestamp(x), ty: 'timestamp' });
  if (a.ty === 'ms' && isTime(b.ty)) return [a, toMs(b)];
  if (b.ty === 'ms' && isTime(a.ty)) return [toMs(a), b];
  if (isTime(a.ty) && b.ty === 'number') return [a, toTime(b)];
  if (isTime(b.ty) && a.ty === 'number') return [toTime(a), b];
  return [a, b];
}

// ── functions ─────────────────────────────────────────────────────────────────────────

/** Operators, as the parser names them (also FUNCTION nodes, with is_operator). */
const OPERATORS = new Set(['+', '-', '*', '/', '//', '%', '**', '^', '||', '~~', '!~~', '~~*', '!~~*', '~~~', '!~~~']);

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
type DuckFunction = (typeof DUCKDB_FUNCTIONS)[number];
const DUCKDB_ALLOWED = new Set<string>(DUCKDB_FUNCTIONS);
const WINDOW_FUNCTIONS = new Set(['count', 'count_star', 'sum', 'avg', 'min', 'max', 'row_number', 'rank', 'dense_rank', 'percent_rank', 'cume_dist', 'ntile', 'lag', 'lead', 'first_value', 'last_value', 'nth_value']);

/** A call being rewritten: its FUNCTION node (children already translated) and its typed arguments. */
interface Call {
  node: Node;
  args: Typed[];
  env: Env;
}
interface Rewrite {
  /** [min, max] arguments, as ClickHouse takes them. */
  arity: readonly [number, number];
  /** Aggregates keep the node's DISTINCT, FILTER and ORDER BY; scalar rewrites refuse them. */
  aggregate?: true;
  to(call: Call): Typed;
}

/**
 * ClickHouse aggregates: the DuckDB one, DISTINCT where ClickHouse's counts distinct values,
 * and `zero` where ClickHouse answers 0 over no rows and DuckDB NULL (sum; sumIf, whose
 * FILTER may leave a group no rows). Each also takes the -If combinator: fIf(args…, cond) is
 * f(args…) FILTER (WHERE cond).
 */
interface AggregateSpec {
  to: DuckFunction;
  distinct?: true;
  zero?: true;
  /** Arguments besides an -If's condition (default 1). */
  args?: 2;
}
const AGGREGATES: Record<string, AggregateSpec> = {
  count: { to: 'count' },
  sum: { to: 'sum', zero: true },
  avg: { to: 'avg' },
  min: { to: 'min' },
  max: { to: 'max' },
  median: { to: 'median' },
  uniq: { to: 'count', distinct: true },
  uniqexact: { to: 'count', distinct: true },
  countdistinct: { to: 'count', distinct: true },
  grouparray: { to: 'list' },
  groupuniqarray: { to: 'list', distinct: true },
  anylast: { to: 'last' },
  argmax: { to: 'arg_max', args: 2 },
  argmin: { to: 'arg_min', args: 2 },
};

function aggregate(spec: AggregateSpec, call: Call, condition?: Node): Typed {
  const node = call.node;
  node.function_name = spec.to === 'count' && call.args.length === 0 ? 'count_star' : spec.to;
  // ClickHouse averages a Bool as 0 and 1 (avg(passed): the share passed); DuckDB has no avg of BOOLEAN.
  node.children = call.args.map((a) => (spec.to === 'avg' && a.ty === 'bool' ? cast(a.node, 'INTEGER') : a.node));
  if (spec.distinct) node.distinct = true;
  if (condition !== undefined) node.filter = and(node.filter ?? null, condition);
  const ty: Ty = ['min', 'max', 'last', 'arg_max', 'arg_min'].includes(spec.to) ? (call.args[0]?.ty ?? 'unknown') : spec.to === 'list' ? 'unknown' : 'number';
  return { node: spec.zero ? coalesce(node, int(0)) : node, ty };
}

/** The DuckDB function of another name, same arguments. */
const same = (name: DuckFunction, arity: readonly [number, number], ty: Ty = 'unknown'): Rewrite => ({ arity, to: (c) => ({ node: fn(name, ...c.args.map((a) => a.node)), ty }) });
const arg = (c: Call, i: number): Typed => c.args[i] ?? shape();
const truncated = (unit: string, ty: 'timestamp' | 'date'): Rewrite => ({
  arity: [1, 1],
  to: (c) => {
    const start = fn('date_trunc', text(unit), asTimestamp(arg(c, 0)));
    return { node: ty === 'date' ? cast(start, 'DATE') : start, ty };
  },
});
const bucket = (minutes: number): Rewrite => ({ arity: [1, 1], to: (c) => ({ node: fn('time_bucket', fn('to_minutes', int(minutes)), asTimestamp(arg(c, 0))), ty: 'timestamp' }) });
/** ClickHouse's toInterval… functions and DuckDB's (which the parser also makes of `INTERVAL n UNIT`). */
const INTERVALS = {
  toIntervalYear: 'to_years', toIntervalQuarter: 'to_quarters', toIntervalMonth: 'to_months', toIntervalWeek: 'to_weeks', toIntervalDay: 'to_days',
  toIntervalHour: 'to_hours', toIntervalMinute: 'to_minutes', toIntervalSecond: 'to_seconds', toIntervalMillisecond: 'to_milliseconds', toIntervalMicrosecond: 'to_microseconds',
} as const satisfies Record<string, DuckFunction>;
const interval = (to: DuckFunction): Rewrite => ({ arity: [1, 1], to: (c) => ({ node: fn(to, arg(c, 0).node), ty: 'interval' }) });
/** The integer types of ClickHouse's toInt… / toUInt…: their bits, and whether signed. */
const INTEGER_TYPES: Partial<Record<CastType, readonly [bits: number, signed: boolean]>> = {
  TINYINT: [8, true], SMALLINT: [16, true], INTEGER: [32, true], BIGINT: [64, true],
  UTINYINT: [8, false], USMALLINT: [16, false], UINTEGER: [32, false], UBIGINT: [64, false],
};
const hugeint = (n: bigint): Node => cast(text(String(n)), 'HUGEINT');
/**
 * A number as ClickHouse's toInt8…toUInt64 make it: the fraction cut off (DuckDB's CAST
 * rounds), then wrapped into the type's range as two's complement does (toInt8(300) is 44,
 * toUInt8(-1) 255), where DuckDB's CAST refuses it.
 */
function wrapped(x: Node, [bits, signed]: readonly [number, boolean]): Node {
  const size = 1n << BigInt(bits);
  const w = hugeint(size);
  const m = fn('%', fn('+', fn('%', cast(fn('trunc', x), 'HUGEINT'), w), w), w);
  return signed ? caseWhen([[compare('COMPARE_GREATERTHAN', m, hugeint(size / 2n - 1n)), fn('-', m, hugeint(size))]], m) : m;
}
const conversion = (to: Exclude<CastType, 'DATE' | 'TIMESTAMP' | 'HUGEINT'>): Rewrite => ({
  arity: [1, 1],
  to: (c) => {
    const x = arg(c, 0);
    const integer = INTEGER_TYPES[to];
    return { node: cast(integer !== undefined && x.ty === 'number' ? wrapped(x.node, integer) : x.node, to), ty: to === 'VARCHAR' ? 'string' : 'number' };
  },
});
const utcNow = (): Node => fn('timezone', text('UTC'), fn('now'));
/** A part of a DateTime, Date or millisecond time (toHour, toDayOfWeek: ISO, Monday is 1). */
const part = (unit: string): Rewrite => ({ arity: [1, 1], to: (c) => ({ node: fn('date_part', text(unit), asTimestamp(arg(c, 0))), ty: 'number' }) });
/** toYYYYMM / toYYYYMMDD: the parts as one number, year first. */
const packedDate = (units: readonly string[]): Rewrite => ({
  arity: [1, 1],
  to: (c) => {
    const t = asTimestamp(arg(c, 0));
    const node = units.reduce<Node | null>((acc, unit) => {
      const value = fn('date_part', text(unit), t);
      return acc === null ? value : fn('+', fn('*', acc, int(100)), value);
    }, null);
    return { node: node ?? shape(), ty: 'number' };
  },
});
/** splitByChar / splitByString: ClickHouse takes the separator first, DuckDB the string. */
const split: Rewrite = { arity: [2, 2], to: (c) => ({ node: fn('string_split', arg(c, 1).node, arg(c, 0).node), ty: 'unknown' }) };
/** empty / notEmpty of a string or an array. */
const emptiness = (empty: boolean): Rewrite => ({ arity: [1, 1], to: (c) => ({ node: compare(empty ? 'COMPARE_EQUAL' : 'COMPARE_GREATERTHAN', fn('length', arg(c, 0).node), int(0)), ty: 'bool' }) });

/**
 * toStartOfInterval(t, INTERVAL n unit): the start of t's bucket of n units, the buckets
 * counted as ClickHouse counts them: weeks from Monday 1970-01-05, months and quarters from
 * January 1900, years from year 0 (2000 here, the same for any n that divides 2000), the
 * rest from the epoch.
 */
const BUCKET_ORIGINS: Partial<Record<string, string>> = { to_weeks: '1970-01-05', to_months: '1900-01-01', to_quarters: '1900-01-01', to_years: '2000-01-01' };
function startOfInterval(c: Call): Typed {
  const width = arg(c, 1);
  if (width.ty !== 'interval') throw invalidAnalyticsQuery('toStartOfInterval(t, INTERVAL n UNIT) takes an interval second', 'write INTERVAL 15 MINUTE');
  const unit = width.node.class === 'FUNCTION' ? string(width.node.function_name) : '';
  const origin = cast(text(BUCKET_ORIGINS[unit] ?? '1970-01-01'), 'TIMESTAMP');
  return { node: fn('time_bucket', width.node, asTimestamp(arg(c, 0)), origin), ty: 'timestamp' };
}

/** toStartOfWeek's mode: even (the default) weeks start on Sunday, odd on Monday. */
function weekStart(c: Call): Typed {
  const mode = c.args[1];
  let monday = false;
  if (mode !== undefined) {
    const value = mode.node.class === 'CONSTANT' ? object(mode.node.value).value : undefined;
    if (typeof value !== 'number' && typeof value !== 'bigint') throw invalidAnalyticsQuery('toStartOfWeek(t, mode) takes a constant integer mode');
    monday = Number(value) % 2 === 1;
  }
  const t = asTimestamp(arg(c, 0));
  const start = monday ? fn('date_trunc', text('week'), t) : fn('-', fn('date_trunc', text('week'), fn('+', t, fn('to_days', int(1)))), fn('to_days', int(1)));
  return { node: cast(start, 'DATE'), ty: 'date' };
}

/** ClickHouse functions of Unkey's docs and allowlist, by lowercased name, as DuckDB. */
const CLICKHOUSE: Record<string, Rewrite> = {
  ...Object.fromEntries(
    Object.entries(AGGREGATES).flatMap(([name, spec]) => [
      [name, { arity: [name === 'count' ? 0 : (spec.args ?? 1), spec.args ?? 1], aggregate: true, to: (c: Call) => aggregate(spec, c) } satisfies Rewrite],
      [`${name}if`, { arity: [name === 'count' ? 1 : (spec.args ?? 1) + 1, (spec.args ?? 1) + 1], aggregate: true, to: (c: Call) => aggregate(spec, { ...c, args: c.args.slice(0, -1) }, c.args.at(-1)?.node) } satisfies Rewrite],
    ]),
  ),

  now: { arity: [0, 0], to: () => ({ node: fn('date_trunc', text('second'), utcNow()), ty: 'timestamp' }) },
  now64: { arity: [0, 1], to: () => ({ node: fn('date_trunc', text('millisecond'), utcNow()), ty: 'timestamp' }) },
  today: { arity: [0, 0], to: () => ({ node: cast(utcNow(), 'DATE'), ty: 'date' }) },
  yesterday: { arity: [0, 0], to: () => ({ node: cast(fn('-', utcNow(), fn('to_days', int(1))), 'DATE'), ty: 'date' }) },
  tostartofminute: truncated('minute', 'timestamp'),
  tostartofhour: truncated('hour', 'timestamp'),
  tostartofday: truncated('day', 'timestamp'),
  tostartofmonth: truncated('month', 'date'),
  tostartofquarter: truncated('quarter', 'date'),
  tostartofyear: truncated('year', 'date'),
  tostartoffiveminutes: bucket(5),
  tostartoftenminutes: bucket(10),
  tostartoffifteenminutes: bucket(15),
  tostartofinterval: { arity: [2, 2], to: startOfInterval },
  tostartofweek: { arity: [1, 2], to: weekStart },
  tomonday: { arity: [1, 1], to: (c) => weekStart({ ...c, args: [arg(c, 0), { node: int(1), ty: 'number' }] }) },
  date_trunc: { arity: [2, 2], to: (c) => ({ node: fn('date_trunc', arg(c, 0).node, asTimestamp(arg(c, 1))), ty: 'timestamp' }) },
  todate: { arity: [1, 1], to: (c) => ({ node: arg(c, 0).ty === 'date' ? arg(c, 0).node : arg(c, 0).ty === 'string' ? cast(arg(c, 0).node, 'DATE') : cast(asTimestamp(arg(c, 0)), 'DATE'), ty: 'date' }) },
  todatetime: { arity: [1, 1], to: (c) => ({ node: fromSeconds(arg(c, 0), false), ty: 'timestamp' }) },
  todatetime64: { arity: [1, 2], to: (c) => ({ node: fromSeconds(arg(c, 0), true), ty: 'timestamp' }) },
  fromunixtimestamp: { arity: [1, 1], to: (c) => ({ node: fromSeconds(arg(c, 0), false), ty: 'timestamp' }) },
  fromunixtimestamp64milli: { arity: [1, 1], to: (c) => ({ node: fn('epoch_ms', cast(arg(c, 0).node, 'BIGINT')), ty: 'timestamp' }) },
  tounixtimestamp: {
    arity: [1, 1],
    to: (c) => {
      const x = arg(c, 0);
      if (x.ty === 'number') return x;
      return { node: fn('//', x.ty === 'ms' ? x.node : fn('epoch_ms', asTimestamp(x)), int(1000)), ty: 'number' };
    },
  },
  tounixtimestamp64milli: { arity: [1, 1], to: (c) => ({ node: arg(c, 0).ty === 'ms' || arg(c, 0).ty === 'number' ? arg(c, 0).node : fn('epoch_ms', asTimestamp(arg(c, 0))), ty: 'ms' }) },
  formatdatetime: { arity: [2, 2], to: (c) => ({ node: fn('strftime', asTimestamp(arg(c, 0)), arg(c, 1).node), ty: 'string' }) },
  toyear: part('year'),
  tomonth: part('month'),
  todayofmonth: part('day'),
  todayofyear: part('doy'),
  todayofweek: part('isodow'),
  tohour: part('hour'),
  tominute: part('minute'),
  tosecond: part('second'),
  toyyyymm: packedDate(['year', 'month']),
  toyyyymmdd: packedDate(['year', 'month', 'day']),
  // The unit boundaries crossed from the second to the third, in both.
  datediff: { arity: [3, 3], to: (c) => ({ node: fn('date_diff', arg(c, 0).node, asTimestamp(arg(c, 1)), asTimestamp(arg(c, 2))), ty: 'number' }) },
  ...Object.fromEntries(Object.entries(INTERVALS).map(([name, to]) => [name.toLowerCase(), interval(to)])),
  tointervalnanosecond: { arity: [1, 1], to: (c) => ({ node: fn('to_microseconds', fn('//', arg(c, 0).node, int(1000))), ty: 'interval' }) },

  tostring: conversion('VARCHAR'),
  toint8: conversion('TINYINT'),
  toint16: conversion('SMALLINT'),
  toint32: conversion('INTEGER'),
  toint64: conversion('BIGINT'),
  touint8: conversion('UTINYINT'),
  touint16: conversion('USMALLINT'),
  touint32: conversion('UINTEGER'),
  touint64: conversion('UBIGINT'),
  tofloat32: conversion('FLOAT'),
  tofloat64: conversion('DOUBLE'),

  startswith: same('starts_with', [2, 2], 'bool'),
  endswith: same('ends_with', [2, 2], 'bool'),
  trimleft: same('ltrim', [1, 1], 'string'),
  trimright: same('rtrim', [1, 1], 'string'),
  trimboth: same('trim', [1, 1], 'string'),
  // position(needle IN haystack) parses as position(haystack, needle), ClickHouse's order; ClickHouse's position(h, n) does not parse.
  position: same('strpos', [2, 2], 'number'),
  locate: same('strpos', [2, 2], 'number'),
  replaceall: same('replace', [3, 3], 'string'),
  match: same('regexp_matches', [2, 2], 'bool'),
  splitbychar: split,
  splitbystring: split,
  empty: emptiness(true),
  notempty: emptiness(false),
  modulo: same('%', [2, 2], 'number'),
  power: same('pow', [2, 2], 'number'),
  intdiv: same('//', [2, 2], 'number'),
  multiif: {
    arity: [3, Infinity],
    to: (c) => {
      if (c.args.length % 2 === 0) throw invalidAnalyticsQuery('multiIf(cond1, then1, cond2, then2, …, else) takes an odd number of arguments');
      const checks: [Node, Node][] = [];
      for (let i = 0; i + 1 < c.args.length; i += 2) checks.push([arg(c, i).node, arg(c, i + 1).node]);
      return { node: caseWhen(checks, arg(c, c.args.length - 1).node), ty: arg(c, 1).ty };
    },
  },

  // 1-based, negative from the end, in both (out of range: ClickHouse's default, here NULL).
  arrayelement: same('list_extract', [2, 2]),
  has: same('list_contains', [2, 2], 'bool'),
  hasany: same('list_has_any', [2, 2], 'bool'),
  hasall: same('list_has_all', [2, 2], 'bool'),
  // ClickHouse takes the lambda first, DuckDB the list.
  arrayfilter: { arity: [2, 2], to: (c) => ({ node: fn('list_filter', arg(c, 1).node, arg(c, 0).node), ty: 'unknown' }) },
  arraymap: { arity: [2, 2], to: (c) => ({ node: fn('list_transform', arg(c, 1).node, arg(c, 0).node), ty: 'unknown' }) },
  arrayjoin: { arity: [1, 1], to: arrayJoin },

  // The quantile family, written f(value, levels…) by parametric.ts.
  quantile: quantile('quantile_cont', 'one'),
  quantiles: quantile('quantile_cont', 'list'),
  quantileexact: quantile('quantile_disc', 'one'),
  quantilesexact: quantile('quantile_disc', 'list'),
  quantiletdigest: quantile('quantile_cont', 'one'),
  quantilestdigest: quantile('quantile_cont', 'list'),
  // The latency states of the rate-limit rollups (schema.ts): latency_avg a {sum, count}, latency_p75 / _p99 lists of {p: points, n: decisions}.
  avgmerge: { arity: [1, 1], to: (c) => ({ node: fn('kw_avg_merge', arg(c, 0).node), ty: 'number' }) },
  quantilestdigestmerge: { arity: [2, Infinity], to: (c) => ({ node: fn('kw_quantiles', arg(c, 0).node, fn('list_value', ...c.args.slice(1).map((a) => a.node))), ty: 'unknown' }) },
  quantiletdigestmerge: { arity: [1, 2], to: (c) => ({ node: fn('list_extract', fn('kw_quantiles', arg(c, 0).node, fn('list_value', c.args[1]?.node ?? half())), int(1)), ty: 'number' }) },
};

/** 0.5, the level of a quantile without one (the median). */
const half = (): Node => constant('DOUBLE', 0.5);

/**
 * quantile(level)(x) and its kin as DuckDB's quantile_cont / quantile_disc (an approximate
 * ClickHouse quantile as the exact one): `one` level (0.5 when none is given) or a `list` of
 * them, answered as a list. DuckDB checks the levels (constants within [0, 1]).
 */
function quantile(to: 'quantile_cont' | 'quantile_disc', levels: 'one' | 'list'): Rewrite {
  return {
    arity: levels === 'one' ? [1, 2] : [2, Infinity],
    aggregate: true,
    to: (c) => {
      const node = c.node;
      const given = c.args.slice(1).map((a) => a.node);
      node.function_name = to;
      node.children = [arg(c, 0).node, levels === 'one' ? (given[0] ?? half()) : fn('list_value', ...given)];
      return { node, ty: levels === 'one' ? 'number' : 'unknown' };
    },
  };
}

/**
 * ClickHouse's arrayJoin(arr) repeats its row once per element. DuckDB allows unnest() in a
 * SELECT list only without GROUP BY, so each distinct array becomes a lateral cross join of
 * the SELECT's FROM, `(SELECT unnest(arr) AS value) AS __kw_array_join_N`, and the call a
 * reference to its value (rows with an empty array drop out, as in ClickHouse).
 */
function arrayJoin(c: Call): Typed {
  const select = c.env.select;
  if (select === undefined) throw invalidAnalyticsQuery('arrayJoin() is supported in a SELECT only');
  const array = arg(c, 0).node;
  const key = canonical(array);
  let join = select.arrayJoins.find((j) => j.key === key);
  if (join === undefined) select.arrayJoins.push((join = { key, alias: `__kw_array_join_${select.id}_${select.arrayJoins.length + 1}`, array }));
  return { node: columnRef(join.alias, 'value'), ty: 'unknown' };
}

// ── the walk ──────────────────────────────────────────────────────────────────────────

interface Binding {
  /** The FROM item's alias (lowercased): what qualifies its columns. */
  name: string;
  columns: Columns | undefined;
}
interface Cte {
  /** The name it is renamed to in the output. */
  name: string;
  columns: Columns | undefined;
}
interface ArrayJoin {
  key: string;
  alias: string;
  array: Node;
}
/** What a point of the tree sees: CTEs, the FROM items and select-list aliases of its SELECT, lambda parameters. */
interface Env {
  ctes: ReadonlyMap<string, Cte>;
  from: Binding[];
  aliases: Map<string, Ty>;
  lambdas: ReadonlySet<string>;
  outer: Env | undefined;
  /** The SELECT the point is in (undefined outside one): its number and hoisted arrayJoin() calls. */
  select: { id: number; arrayJoins: ArrayJoin[] } | undefined;
}
const ROOT: Env = { ctes: new Map(), from: [], aliases: new Map(), lambdas: new Set(), outer: undefined, select: undefined };

/** Prefix of renamed CTEs: DuckDB's parser keeps it as written, and no public name starts with it. */
const CTE_PREFIX = '__kw_cte_';

const EXPRESSION_CLASSES = new Set(['FUNCTION', 'COLUMN_REF', 'CONSTANT', 'COMPARISON', 'CONJUNCTION', 'OPERATOR', 'CASE', 'CAST', 'BETWEEN', 'LAMBDA', 'SUBQUERY', 'STAR', 'WINDOW', 'COLLATE', 'POSITIONAL_REFERENCE']);
const OPERATOR_TYPES = new Set(['COMPARE_IN', 'COMPARE_NOT_IN', 'OPERATOR_NOT', 'OPERATOR_IS_NULL', 'OPERATOR_IS_NOT_NULL', 'OPERATOR_COALESCE', 'ARRAY_EXTRACT', 'ARRAY_SLICE', 'STRUCT_EXTRACT', 'OPERATOR_UNPACK']);
/** Typed objects that are structure, not expressions or FROM items: modifiers, ORDER BY terms. */
const STRUCTURE_TYPES = new Set(['ORDER_MODIFIER', 'LIMIT_MODIFIER', 'LIMIT_PERCENT_MODIFIER', 'DISTINCT_MODIFIER', 'ORDER_DEFAULT', 'ASCENDING', 'DESCENDING']);
const QUERY_TYPES = new Set(['SELECT_NODE', 'SET_OPERATION_NODE']);
const FROM_TYPES = new Set(['BASE_TABLE', 'JOIN', 'SUBQUERY', 'EMPTY', 'EXPRESSION_LIST']);
/** Type information inside CAST targets and constants: data. */
const isTypeInfo = (type: string): boolean => type.endsWith('_TYPE_INFO');

const PUBLIC_NAMES = { verifications: VERIFICATION_TABLES, ratelimits: RATELIMIT_TABLES } as const;
const PROCEDURE = { verifications: 'analytics.getVerifications', ratelimits: 'analytics.getRatelimits' } as const;

// ── ClickHouse's names of unaliased columns ───────────────────────────────────────────

/** ClickHouse's function for each DuckDB operator, comparison and connective. */
const CLICKHOUSE_OPERATORS: Record<string, string> = {
  '+': 'plus', '-': 'minus', '*': 'multiply', '/': 'divide', '//': 'intDiv', '%': 'modulo', '||': 'concat',
  '~~': 'like', '!~~': 'notLike', '~~*': 'ilike', '!~~*': 'notILike',
  COMPARE_EQUAL: 'equals', COMPARE_NOTEQUAL: 'notEquals', COMPARE_LESSTHAN: 'less', COMPARE_GREATERTHAN: 'greater',
  COMPARE_LESSTHANOREQUALTO: 'lessOrEquals', COMPARE_GREATERTHANOREQUALTO: 'greaterOrEquals',
  CONJUNCTION_AND: 'and', CONJUNCTION_OR: 'or', OPERATOR_NOT: 'not', OPERATOR_IS_NULL: 'isNull', OPERATOR_IS_NOT_NULL: 'isNotNull',
  COMPARE_IN: 'in', COMPARE_NOT_IN: 'notIn',
};

/** What the parser makes of `INTERVAL n UNIT`, as ClickHouse names it. */
const CLICKHOUSE_INTERVALS: Record<string, string> = Object.fromEntries(Object.entries(INTERVALS).map(([name, to]) => [to, name]));

/** The token of the query's text at a node's location matching `re` (anchored at its start), if it has a location. */
function tokenAt(e: Node, text: Buffer, re: RegExp): string | undefined {
  const at = e.query_location;
  if (typeof at !== 'number' || at >= text.length) return undefined;
  const m = re.exec(text.toString('utf8', at, Math.min(text.length, at + 256)));
  return m?.[0];
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*/;
const NUMBER = /^[0-9][0-9.]*(?:[eE][+-]?[0-9]+)?/;

/**
 * The name ClickHouse gives the column of an unaliased expression (its analyzer's: functions
 * as written, operators as the functions they are, `count(*)` as `count()`, strings in single
 * quotes), or undefined for expressions it names in ways not followed here (CASE, CAST,
 * lambdas, subqueries, window functions), which keep DuckDB's name.
 */
export function clickhouseName(e: Node, text: Buffer): string | undefined {
  const all = (xs: Json[]): string | undefined => {
    const names = xs.map((x) => clickhouseName(object(x), text));
    return names.every((n) => n !== undefined) ? names.join(', ') : undefined;
  };
  const call = (name: string | undefined, xs: Json[]): string | undefined => {
    const args = name === undefined ? undefined : all(xs);
    return args === undefined ? undefined : `${name}(${args})`;
  };
  switch (e.class) {
    case 'COLUMN_REF':
      return array(e.column_names).map(string).join('.');
    case 'CONSTANT': {
      const value = object(e.value);
      if (value.is_null === true) return 'NULL';
      const type = string(object(value.type).id);
      if (type === 'VARCHAR') return `'${string(value.value).replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;
      return tokenAt(e, text, NUMBER);
    }
    case 'CAST': {
      // `true` / `false` are a cast of 't' / 'f' the parser adds (no location of its own).
      const child = object(e.child);
      const value = child.class === 'CONSTANT' ? object(child.value).value : undefined;
      if (object(e.cast_type).id === 'BOOLEAN' && typeof e.query_location !== 'number' && (value === 't' || value === 'f')) return value === 't' ? 'true' : 'false';
      return undefined;
    }
    case 'COMPARISON':
      return call(CLICKHOUSE_OPERATORS[string(e.type)], [e.left ?? null, e.right ?? null]);
    case 'CONJUNCTION':
      return call(CLICKHOUSE_OPERATORS[string(e.type)], array(e.children));
    case 'OPERATOR': {
      const name = CLICKHOUSE_OPERATORS[string(e.type)];
      if (name === undefined) return undefined;
      const [first, ...rest] = array(e.children);
      if (name !== 'in' && name !== 'notIn') return call(name, array(e.children));
      const list = all(rest);
      const x = first === undefined ? undefined : clickhouseName(object(first), text);
      return x === undefined || list === undefined ? undefined : `${name}(${x}, (${list}))`;
    }
    case 'FUNCTION': {
      if (present(e.filter) || array(object(e.order_bys).orders).length > 0) return undefined;
      const fname = string(e.function_name);
      const children = array(e.children);
      if (e.is_operator === true) {
        return call(fname === '-' && children.length === 1 ? 'negate' : CLICKHOUSE_OPERATORS[fname], children);
      }
      const interval = CLICKHOUSE_INTERVALS[fname];
      if (interval !== undefined) {
        // INTERVAL n UNIT: to_<unit>(CAST(trunc(CAST(n AS DOUBLE)) AS INTEGER)), n where the text has it.
        const n = tokenAt(e, text, NUMBER);
        return n === undefined ? undefined : `${interval}(${n})`;
      }
      const written = tokenAt(e, text, IDENTIFIER);
      if (fname === 'count_star') return `${written ?? 'count'}()`;
      const name = written !== undefined && written.toLowerCase() === fname ? written : fname;
      return call(e.distinct === true ? `${name}Distinct` : name, children);
    }
    default:
      return undefined;
  }
}

/**
 * One query's translation: a generic walk of the tree (visit) that hands expressions,
 * FROM items and query nodes to their handlers, which check them, rewrite them in place and
 * note their types (for the time rules) and output columns (for CTEs and subqueries).
 */
class Translation {
  private readonly types = new WeakMap<Node, Ty>();
  private readonly outputs = new WeakMap<Node, Columns | undefined>();
  private ctes = 0;
  private selects = 0;

  constructor(
    private readonly kind: Scope['kind'],
    private readonly publics: ReadonlyMap<string, PublicView>,
    /** The query's text, as the parser's locations count it (UTF-8 bytes). */
    private readonly text: Buffer,
  ) {}

  /** A query node (SELECT, set operation), translated in place; its output columns are remembered. */
  query(node: Node, env: Env): Node {
    const type = string(node.type);
    if (type === 'RECURSIVE_CTE_NODE') throw invalidAnalyticsQuery('recursive CTEs (WITH RECURSIVE) are not supported', 'aggregate over the public tables instead');
    if (!QUERY_TYPES.has(type)) throw invalidAnalyticsQuery(`${type} is not supported`);
    const scoped: Env = { ...env, ctes: this.cteMap(object(node.cte_map), env), select: undefined };
    if (type === 'SET_OPERATION_NODE') {
      node.left = this.visit(node.left ?? null, scoped);
      node.right = this.visit(node.right ?? null, scoped);
      const columns = this.outputs.get(object(node.left));
      this.rest(node, ['type', 'cte_map', 'left', 'right'], { ...scoped, from: [{ name: '', columns }] });
      this.outputs.set(node, columns);
      return node;
    }
    if (present(node.sample)) throw invalidAnalyticsQuery('SAMPLE is not supported');
    const select: { id: number; arrayJoins: ArrayJoin[] } = { id: ++this.selects, arrayJoins: [] };
    const inner: Env = { ctes: scoped.ctes, from: [], aliases: new Map(), lambdas: new Set(), outer: env, select };
    const from = this.from(object(node.from_table), inner);
    node.from_table = from.ref;
    inner.from = from.bindings;
    const columns: Columns = new Map();
    let known = true;
    node.select_list = array(node.select_list).map((item) => {
      const original = object(item);
      if (original.alias === '' && original.class !== 'COLUMN_REF' && original.class !== 'STAR') original.alias = clickhouseName(original, this.text) ?? '';
      const e = this.expression(original, inner);
      const ty = this.typeOf(e);
      const alias = typeof e.alias === 'string' ? e.alias.toLowerCase() : '';
      if (alias !== '') inner.aliases.set(alias, ty);
      if (e.class === 'STAR' && e.columns === false && e.expr === null) {
        const relation = string(e.relation_name).toLowerCase();
        for (const b of inner.from.filter((b) => relation === '' || b.name === relation)) {
          if (b.columns === undefined) known = false;
          else for (const [name, t] of b.columns) columns.set(name, t);
        }
      } else if (alias !== '' || e.class === 'COLUMN_REF') {
        columns.set(alias !== '' ? alias : string(array(e.column_names).at(-1)).toLowerCase(), ty);
      }
      return e;
    });
    this.rest(node, ['type', 'cte_map', 'from_table', 'select_list'], inner);
    for (const join of select.arrayJoins) node.from_table = this.lateral(object(node.from_table), join);
    this.outputs.set(node, known ? columns : undefined);
    return node;
  }

  /** A WITH list: each CTE sees the ones before it (not itself: it is not recursive) and is renamed. */
  private cteMap(cteMap: Node, env: Env): ReadonlyMap<string, Cte> {
    this.plain(cteMap, ['map']);
    const visible = new Map(env.ctes);
    for (const item of array(cteMap.map)) {
      const entry = object(item);
      const cte = object(entry.value);
      if (array(cte.key_targets).length > 0) throw invalidAnalyticsQuery('USING KEY is not supported');
      const body = object(cte.query);
      body.node = this.query(object(body.node), { ...env, ctes: new Map(visible) });
      this.plain(body, ['node']);
      this.plain(cte, ['query']);
      const name = `${CTE_PREFIX}${++this.ctes}`;
      visible.set(string(entry.key).toLowerCase(), { name, columns: renamed(this.outputs.get(object(body.node)), cte.aliases) });
      entry.key = name;
    }
    return visible;
  }

  /** A FROM item: the public tables become their scoped SELECTs; anything else that reads data is refused. */
  private from(ref: Node, env: Env): { ref: Node; bindings: Binding[] } {
    const type = string(ref.type);
    if (present(ref.sample)) throw invalidAnalyticsQuery('SAMPLE / TABLESAMPLE is not supported');
    const alias = typeof ref.alias === 'string' ? ref.alias : '';
    switch (type) {
      case 'BASE_TABLE': {
        if (present(ref.at_clause)) throw invalidAnalyticsQuery('AT (VERSION / TIMESTAMP) clauses are not supported');
        this.plain(ref, ['at_clause']);
        const name = string(ref.table_name);
        const qualified = [ref.catalog_name, ref.schema_name, name].filter((p) => p !== '').join('.');
        if (qualified !== name) throw invalidAnalyticsTable(qualified, 'tables are named without a database or schema', this.tablesFix());
        const cte = env.ctes.get(name.toLowerCase());
        if (cte !== undefined) {
          ref.table_name = cte.name;
          ref.alias = alias !== '' ? alias : name;
          return { ref, bindings: [{ name: string(ref.alias).toLowerCase(), columns: renamed(cte.columns, ref.column_name_alias) }] };
        }
        const view = this.publics.get(name.toLowerCase());
        if (view !== undefined) {
          const as = alias !== '' ? alias : name;
          return { ref: subqueryRef(structuredClone(view.node), as, ref.column_name_alias ?? []), bindings: [{ name: as.toLowerCase(), columns: renamed(view.columns, ref.column_name_alias) }] };
        }
        const other = this.kind === 'verifications' ? 'ratelimits' : 'verifications';
        if ((PUBLIC_NAMES[other] as readonly string[]).includes(name.toLowerCase())) {
          throw invalidAnalyticsTable(name, `it holds ${other === 'ratelimits' ? 'rate-limit' : 'verification'} analytics, which ${PROCEDURE[other]} reads`, this.tablesFix());
        }
        throw invalidAnalyticsTable(name, `it is not one of the analytics tables of ${PROCEDURE[this.kind]}`, this.tablesFix());
      }
      case 'SUBQUERY': {
        const subquery = object(ref.subquery);
        subquery.node = this.query(object(subquery.node), env);
        this.plain(subquery, ['node']);
        this.plain(ref, ['subquery']);
        return { ref, bindings: [{ name: alias.toLowerCase(), columns: renamed(this.outputs.get(object(subquery.node)), ref.column_name_alias) }] };
      }
      case 'JOIN': {
        if (array(ref.duplicate_eliminated_columns).length > 0) throw invalidAnalyticsQuery('this JOIN form is not supported');
        const left = this.from(object(ref.left), env);
        // The right side may be a lateral subquery: it sees the left side's columns.
        const right = this.from(object(ref.right), { ...env, from: [...env.from, ...left.bindings] });
        ref.left = left.ref;
        ref.right = right.ref;
        const bindings = [...left.bindings, ...right.bindings];
        ref.condition = ref.condition === null ? null : this.expression(object(ref.condition), { ...env, from: [...env.from, ...bindings] });
        this.plain(ref, ['left', 'right', 'condition']);
        return { ref, bindings };
      }
      case 'EMPTY':
        this.plain(ref, []);
        return { ref, bindings: [] };
      case 'EXPRESSION_LIST': {
        ref.values = array(ref.values).map((row) => array(row).map((e) => this.expression(object(e), env)));
        this.plain(ref, ['values']);
        return { ref, bindings: [{ name: alias.toLowerCase(), columns: undefined }] };
      }
      case 'TABLE_FUNCTION': {
        const f = object(ref.function);
        throw invalidAnalyticsTable(`${string(f.function_name)}()`, 'table functions are not available', this.tablesFix());
      }
      case 'PIVOT':
        throw invalidAnalyticsQuery('PIVOT / UNPIVOT is not supported', 'aggregate with sumIf(x, cond) / countIf(cond) per column');
      case 'SHOW_REF':
        throw invalidAnalyticsQueryType('DESCRIBE, SHOW and SUMMARIZE are not SELECT queries');
      default:
        throw invalidAnalyticsQuery(`the FROM item ${type} is not supported`);
    }
  }

  private tablesFix(): string {
    const [raw, ...rollups] = PUBLIC_NAMES[this.kind];
    return `query ${raw} or ${rollups.join(', ')}`;
  }

  /** `(SELECT unnest(array) AS value) AS alias` joined to the SELECT's FROM (see arrayJoin). */
  private lateral(from: Node, join: ArrayJoin): Node {
    const unnest = fn('unnest', join.array);
    unnest.alias = 'value';
    const right = subqueryRef(selectNode([unnest]), join.alias, []);
    return from.type === 'EMPTY' ? right : crossJoin(from, right);
  }

  /**
   * Any value of the tree: objects with a `class` are expressions, with a string `type`
   * query nodes or structure, others plain containers whose every property is visited.
   */
  private visit(x: Json, env: Env): Json {
    if (Array.isArray(x)) return x.map((v) => this.visit(v, env));
    if (!isObject(x)) return x;
    if (typeof x.class === 'string') return this.expression(x, env);
    if (typeof x.type === 'string') {
      if (QUERY_TYPES.has(x.type) || x.type.endsWith('_NODE')) return this.query(x, env);
      if (FROM_TYPES.has(x.type) || x.type === 'TABLE_FUNCTION' || x.type === 'PIVOT' || x.type === 'SHOW_REF') return this.from(x, env).ref;
      if (!STRUCTURE_TYPES.has(x.type) && !isTypeInfo(x.type)) throw invalidAnalyticsQuery(`${x.type} is not supported`);
    }
    if (present(x.sample)) throw invalidAnalyticsQuery('SAMPLE is not supported');
    this.rest(x, [], env);
    return x;
  }

  /** Visits every property of `node` but `done`. */
  private rest(node: Node, done: readonly string[], env: Env): void {
    for (const key of Object.keys(node)) if (!done.includes(key)) node[key] = this.visit(node[key] ?? null, env);
  }

  /** A FROM item's or container's other properties: scalars and lists of names only. */
  private plain(node: Node, done: readonly string[]): void {
    for (const [key, value] of Object.entries(node)) {
      if (done.includes(key) || value === null || typeof value !== 'object') continue;
      if (key === 'sample') continue; // checked by from()
      if (Array.isArray(value) && value.every((v) => typeof v === 'string')) continue;
      throw invalidAnalyticsQuery(`the ${key} of ${typeof node.type === 'string' ? node.type : 'a FROM item'} is not supported`);
    }
  }

  private typeOf(node: Node): Ty {
    return this.types.get(node) ?? 'unknown';
  }

  private typed(typed: Typed): Node {
    this.types.set(typed.node, typed.ty);
    return typed.node;
  }

  /** An expression, translated bottom-up (its children first) and typed. */
  private expression(e: Node, env: Env): Node {
    const cls = string(e.class);
    if (!EXPRESSION_CLASSES.has(cls)) {
      if (cls === 'PARAMETER') throw invalidAnalyticsQuery('query parameters ($1, ?) are not supported', 'write the values into the query');
      throw invalidAnalyticsQuery(`the expression ${cls} is not supported`);
    }
    if (cls === 'LAMBDA') {
      // The parameters are not columns: lhs is x, or row(x, y) for two.
      const lhs = object(e.lhs);
      const params = lhs.class === 'COLUMN_REF' ? [lhs] : lhs.class === 'FUNCTION' && lhs.function_name === 'row' ? array(lhs.children).map(object) : shape();
      const names = params.map((p) => (p.class === 'COLUMN_REF' && array(p.column_names).length === 1 ? string(array(p.column_names)[0]).toLowerCase() : shape()));
      e.expr = this.expression(object(e.expr), { ...env, lambdas: new Set([...env.lambdas, ...names]) });
      this.plain(e, ['lhs', 'expr']);
      return e;
    }
    if (cls === 'SUBQUERY') {
      const subquery = object(e.subquery);
      subquery.node = this.query(object(subquery.node), env);
      this.plain(subquery, ['node']);
      this.rest(e, ['subquery'], env);
      const first = this.outputs.get(object(subquery.node))?.values().next().value;
      return this.typed({ node: e, ty: e.subquery_type === 'SCALAR' ? (first ?? 'unknown') : 'bool' });
    }
    if (cls === 'CONSTANT') return this.typed({ node: e, ty: typeOfSqlType(object(object(e.value).type).id) });
    if (cls === 'COLUMN_REF') return this.typed({ node: e, ty: this.column(array(e.column_names).map((n) => string(n).toLowerCase()), env) });
    this.rest(e, [], env);
    switch (cls) {
      case 'CAST':
        return this.typed({ node: e, ty: typeOfSqlType(object(e.cast_type).id) });
      case 'COMPARISON': {
        const [left, right] = alignTimes(this.typedOf(e.left), this.typedOf(e.right));
        e.left = left.node;
        e.right = right.node;
        return this.typed({ node: e, ty: 'bool' });
      }
      case 'BETWEEN': {
        const input = this.typedOf(e.input);
        e.lower = alignTimes(input, this.typedOf(e.lower))[1].node;
        e.upper = alignTimes(input, this.typedOf(e.upper))[1].node;
        return this.typed({ node: e, ty: 'bool' });
      }
      case 'OPERATOR': {
        const type = string(e.type);
        if (!OPERATOR_TYPES.has(type)) throw invalidAnalyticsQuery(`the operator ${type} is not supported`);
        const children = array(e.children).map((c) => this.typedOf(c));
        if (type === 'COMPARE_IN' || type === 'COMPARE_NOT_IN') {
          const [first, ...rest] = children;
          if (first !== undefined) e.children = [first.node, ...rest.map((c) => alignTimes(first, c)[1].node)];
        }
        const ty: Ty = type === 'OPERATOR_COALESCE' ? (children.find((c) => c.ty !== 'unknown')?.ty ?? 'unknown') : type.startsWith('ARRAY') || type === 'STRUCT_EXTRACT' || type === 'OPERATOR_UNPACK' ? 'unknown' : 'bool';
        return this.typed({ node: e, ty });
      }
      case 'CASE': {
        const results = [...array(e.case_checks).map((c) => object(c).then_expr), e.else_expr].map((r) => this.typedOf(r).ty);
        return this.typed({ node: e, ty: results.find((t) => t !== 'unknown') ?? 'unknown' });
      }
      case 'CONJUNCTION':
        return this.typed({ node: e, ty: 'bool' });
      case 'FUNCTION':
        return this.call(e, env);
      case 'WINDOW': {
        const name = string(e.function_name).toLowerCase();
        if (!WINDOW_FUNCTIONS.has(name) || (e.schema !== '' && e.schema !== 'main') || e.catalog !== '') throw invalidAnalyticsFunction(string(e.function_name), 'it is not available as a window function', 'use sum, avg, count, min, max, row_number, rank, dense_rank, lag, lead, first_value or last_value');
        const first = array(e.children)[0];
        const keeps = ['min', 'max', 'lag', 'lead', 'first_value', 'last_value', 'nth_value'].includes(name);
        return this.typed({ node: e, ty: keeps ? (first === undefined ? 'unknown' : this.typedOf(first).ty) : 'number' });
      }
      default: // STAR, COLLATE, POSITIONAL_REFERENCE
        return e;
    }
  }

  private typedOf(x: Json | undefined): Typed {
    const node = object(x);
    return { node, ty: this.typeOf(node) };
  }

  /** A function call (children translated): an operator, a ClickHouse rewrite, or a DuckDB function of the allowlist. */
  private call(e: Node, env: Env): Node {
    const written = string(e.function_name);
    const name = written.toLowerCase();
    // The parser itself qualifies some builtins with `main` (list literals, substring).
    if ((e.schema !== '' && e.schema !== 'main') || e.catalog !== '') throw invalidAnalyticsFunction([e.catalog, e.schema, written].filter((p) => p !== '').join('.'), 'functions are named without a database or schema');
    if (e.export_state === true) throw invalidAnalyticsQuery('EXPORT_STATE is not supported');
    const args = array(e.children).map((c) => this.typedOf(c));
    if (e.is_operator === true) {
      if (!OPERATORS.has(name)) throw invalidAnalyticsFunction(written, 'this operator is not available');
      const shifted = shiftedTime(name, args);
      return this.typed(shifted === undefined ? { node: e, ty: operatorType(name, args) } : aliased(shifted, e));
    }
    const rewrite = CLICKHOUSE[name];
    if (rewrite !== undefined) {
      const [min, max] = rewrite.arity;
      if (args.length < min || args.length > max) {
        throw invalidAnalyticsQuery(`${written}() takes ${min === max ? min : max === Infinity ? `at least ${min}` : `${min} to ${max}`} argument${max === 1 ? '' : 's'}, not ${args.length}`);
      }
      const modified = e.filter !== null || e.distinct === true || array(object(e.order_bys).orders).length > 0;
      if (modified && !rewrite.aggregate) throw invalidAnalyticsQuery(`${written}() is not an aggregate: DISTINCT, FILTER and ORDER BY do not apply to it`);
      return this.typed(aliased(rewrite.to({ node: e, args, env }), e));
    }
    if (!DUCKDB_ALLOWED.has(name)) {
      throw invalidAnalyticsFunction(written, 'it is not on the allowlist of analytics functions', 'use the functions of Unkey\'s analytics docs: count, sum, avg, min, max, countIf, sumIf, uniq, groupArray, toStartOfHour, toDate, now, has, hasAny, arrayJoin, arrayFilter, lower, concat, round, if, multiIf, …');
    }
    const ty = NATIVE_TYPES[name];
    return this.typed({ node: e, ty: typeof ty === 'function' ? ty(args) : (ty ?? 'unknown') });
  }

  /** A column's type: a lambda parameter, a FROM item's column, a select-list alias, or an outer query's. */
  private column(names: string[], env: Env): Ty {
    if (names.length === 1 && env.lambdas.has(names[0] ?? '')) return 'unknown';
    for (let at: Env | undefined = env; at !== undefined; at = at.outer) {
      if (names.length === 2) {
        const binding = at.from.find((b) => b.name === names[0]);
        if (binding !== undefined) return binding.columns?.get(names[1] ?? '') ?? 'unknown';
      } else if (names.length === 1) {
        const found = at.from.filter((b) => b.columns?.has(names[0] ?? ''));
        if (found.length === 1) return found[0]?.columns?.get(names[0] ?? '') ?? 'unknown';
        const alias = at.aliases.get(names[0] ?? '');
        if (alias !== undefined) return alias;
        if (found.length > 1 || at.from.some((b) => b.columns === undefined)) return 'unknown';
      }
    }
    return 'unknown';
  }
}

/** The result types of native calls the time rules care about (INTERVAL n UNIT parses to to_<unit>(n)). */
const NATIVE_TYPES: Partial<Record<string, Ty | ((args: Typed[]) => Ty)>> = {
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
function shiftedTime(name: string, args: Typed[]): Typed | undefined {
  if ((name !== '+' && name !== '-') || args.length !== 2) return undefined;
  const [a, b] = args as [Typed, Typed];
  const [time, n] = (a.ty === 'timestamp' || a.ty === 'date') && b.ty === 'number' ? [a, b] : name === '+' && a.ty === 'number' && (b.ty === 'timestamp' || b.ty === 'date') ? [b, a] : [];
  if (time === undefined || n === undefined) return undefined;
  const shifted = fn(name, time.node, time.ty === 'date' ? fn('to_days', cast(n.node, 'INTEGER')) : fn('to_seconds', cast(n.node, 'DOUBLE')));
  return time.ty === 'date' ? { node: cast(shifted, 'DATE'), ty: 'date' } : { node: shifted, ty: 'timestamp' };
}

function operatorType(name: string, args: Typed[]): Ty {
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

/** Output column names given by `aliases` (a CTE's or FROM item's column list), positionally. */
function renamed(columns: Columns | undefined, aliases: Json | undefined): Columns | undefined {
  const names = Array.isArray(aliases) ? aliases.map((a) => string(a).toLowerCase()) : [];
  if (names.length === 0 || columns === undefined) return columns;
  const types = [...columns.values()];
  return new Map([...names.map((n, i): [string, Ty] => [n, types[i] ?? 'unknown']), ...[...columns].slice(names.length)]);
}

// ── the final check ───────────────────────────────────────────────────────────────────

const STORED_TABLES = new Set(['verifications', 'ratelimits', 'rollup_state', ...['minute', 'hour', 'day', 'month'].flatMap((g) => [`verifications_rollup_${g}`, `ratelimits_rollup_${g}`])]);

/** A SELECT that reads a stored table: the table and its WHERE, as one string; else undefined. */
function storedRead(x: Node): string | undefined {
  if (x.type !== 'SELECT_NODE' || !isObject(x.from_table) || x.from_table.type !== 'BASE_TABLE' || !STORED_TABLES.has(string(x.from_table.table_name))) return undefined;
  return `${string(x.from_table.table_name)}\n${canonical(x.where_clause ?? null)}`;
}

/**
 * The SQL about to run, parsed again, checked on its own: one SELECT; stored tables only as
 * the whole FROM of a SELECT whose WHERE is a public table's scope filter; other tables only
 * renamed CTEs defined in the query; no table functions, samples or AT clauses; only
 * DUCKDB_FUNCTIONS; only known node kinds. Every object is visited.
 */
function assertConfined(parsed: Json, publics: ReadonlyMap<string, PublicView>): void {
  const fail = (what: string): never => {
    throw new Error(`analytics dialect: the translated query ${what}`);
  };
  const result = object(parsed);
  if (result.error !== false || array(result.statements).length !== 1) fail('is not one SELECT');
  // Every read of a stored table the public SELECTs make (the table with its scope filter).
  const reads = new Set<string>();
  const gather = (x: Json): void => {
    if (Array.isArray(x)) return x.forEach(gather);
    if (!isObject(x)) return;
    const read = storedRead(x);
    if (read !== undefined) reads.add(read);
    Object.values(x).forEach(gather);
  };
  for (const v of publics.values()) gather(v.node);
  const ctes = new Set<string>();
  const approved = new Set<Node>();
  const collect = (x: Json): void => {
    if (Array.isArray(x)) x.forEach(collect);
    else if (isObject(x)) {
      if (isObject(x.cte_map)) for (const entry of array(x.cte_map.map)) ctes.add(string(object(entry).key));
      Object.values(x).forEach(collect);
    }
  };
  collect(parsed);
  const visit = (x: Json): void => {
    if (Array.isArray(x)) return x.forEach(visit);
    if (!isObject(x)) return;
    if (present(x.sample)) fail('samples a table');
    if (present(x.at_clause)) fail('has an AT clause');
    if (typeof x.class === 'string') {
      if (!EXPRESSION_CLASSES.has(x.class)) fail(`holds a ${x.class} expression`);
      if (x.class === 'OPERATOR' && !OPERATOR_TYPES.has(string(x.type))) fail(`holds the operator ${String(x.type)}`);
      if (x.class === 'FUNCTION' || x.class === 'WINDOW') {
        if (!DUCKDB_ALLOWED.has(string(x.function_name).toLowerCase()) || (x.schema !== '' && x.schema !== 'main') || x.catalog !== '') fail(`calls ${String(x.function_name)}`);
      }
      if (x.class === 'CONSTANT') return; // its value is data
    } else if (typeof x.type === 'string') {
      const type = x.type;
      if (!QUERY_TYPES.has(type) && !FROM_TYPES.has(type) && !STRUCTURE_TYPES.has(type) && !isTypeInfo(type)) fail(`holds a ${type}`);
      const read = storedRead(x);
      if (read !== undefined) {
        if (!reads.has(read)) fail(`reads ${String(object(x.from_table).table_name)} without the scope's filter of a public table's SELECT`);
        approved.add(object(x.from_table));
      }
      if (type === 'BASE_TABLE') {
        const name = string(x.table_name);
        if (x.schema_name !== '' || x.catalog_name !== '') fail(`names a qualified table`);
        if (!(approved.has(x) || (name.startsWith(CTE_PREFIX) && ctes.has(name)))) fail(`reads the table ${name}`);
      }
    }
    Object.values(x).forEach(visit);
  };
  visit(parsed);
}
