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
//  - functions: an allowlist. ClickHouse names are rewritten to DuckDB (CLICKHOUSE, clickhouse.ts),
//    DuckDB names on DUCKDB_FUNCTIONS (sqlTree.ts) pass as they are, anything else is
//    invalid_analytics_function. The parser lowercases function names, so ClickHouse's
//    case-sensitive names (countIf) are matched case-insensitively;
//  - every object of the tree is visited and any node kind this module does not know is
//    refused: a newer DuckDB that adds a clause gets a 400, not an unchecked pass;
//  - a select-list item without an alias is named as ClickHouse names it (`count()`,
//    `countIf(equals(outcome, 'VALID'))`, clickhouseName in clickhouse.ts), so that rows read the same as
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
import { DIMS, EVENTS, publicSelect, RATELIMIT_TABLES, VERIFICATION_TABLES, type PublicTable } from './schema.js';
import { backtickNames, unparametric } from './parametric.js';
import { aliased, alignTimes, array, canonical, type Columns, crossJoin, DUCKDB_ALLOWED, fn, isObject, type Json, NATIVE_TYPES, type Node, object, OPERATORS, operatorType, parseJson, present, selectNode, shape, shiftedTime, string, stringifyJson, TooDeep, subqueryRef, type Ty, type Typed, typeOfSqlType, WINDOW_FUNCTIONS } from './sqlTree.js';
import { type ArrayJoin, CLICKHOUSE, type SelectInArrayJoin, clickhouseName } from './clickhouse.js';
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
/**
 * How deep a query's tree may nest (json_serialize_sql's objects and arrays; a function call
 * is two of them): DuckDB's binder takes time that grows faster than the depth (a call nested
 * 200 deep 0.14 s, 900 deep 20 s), and it cannot be interrupted, so the query timeout would not
 * stop it. 256 is about 125 nested calls.
 */
export const MAX_TREE_DEPTH = 256;
/**
 * How deep subqueries in expressions may nest (`(SELECT … (SELECT …))`, IN / EXISTS): DuckDB's
 * planning of them doubles with each level past about 15 (20 levels 0.2 s, 25 levels 11 s).
 */
export const MAX_SUBQUERY_NESTING = 16;

export async function translate(query: string, scope: Scope, parser: SqlParser, views: PublicViews = new PublicViews()): Promise<string> {
  // DuckDB's parser ends the text at a NUL: what follows would be dropped unseen.
  if (query.includes('\0')) throw invalidAnalyticsQuery('it holds a NUL character', 'remove it');
  // One after the other: the caller's connection runs one statement at a time.
  const text = unparametric(backtickNames(query));
  const parsed = await parser.serialize(text);
  const publics = await views.of(scope, parser);
  try {
    const node = new Translation(scope.kind, publics, Buffer.from(text, 'utf8')).query(userStatement(parseJson(parsed, MAX_TREE_DEPTH), text), ROOT);
    const sql = await parser.deserialize(stringifyJson({ error: false, statements: [{ node, named_param_map: [] }] }));
    assertConfined(parseJson(await parser.serialize(sql)), publics);
    return sql;
  } catch (err) {
    if (err instanceof TooDeep) throw invalidAnalyticsQuery(`it is nested too deeply (its tree more than ${MAX_TREE_DEPTH} levels: about ${MAX_TREE_DEPTH / 2} calls or operators inside each other)`, 'flatten its expressions');
    // The walks recurse as deep as the query nests (bounded above, and by DuckDB's parser).
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
/** What a point of the tree sees: CTEs, the FROM items and select-list aliases of its SELECT, lambda parameters. */
interface Env {
  ctes: ReadonlyMap<string, Cte>;
  from: Binding[];
  aliases: Map<string, Ty>;
  lambdas: ReadonlySet<string>;
  outer: Env | undefined;
  /** The SELECT the point is in (undefined outside one): its number and hoisted arrayJoin() calls. */
  select: SelectInArrayJoin | undefined;
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
  /** Subqueries in expressions the walk is inside now. */
  private subqueryNesting = 0;

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
    const select: SelectInArrayJoin = { id: ++this.selects, arrayJoins: [] };
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
      if (++this.subqueryNesting > MAX_SUBQUERY_NESTING) throw invalidAnalyticsQuery(`its subqueries in expressions are nested more than ${MAX_SUBQUERY_NESTING} deep`, 'join the tables, or use CTEs, instead of nesting subqueries');
      subquery.node = this.query(object(subquery.node), env);
      this.subqueryNesting--;
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
      return this.typed(aliased(rewrite.to({ node: e, args, select: env.select }), e));
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

/** Output column names given by `aliases` (a CTE's or FROM item's column list), positionally. */
function renamed(columns: Columns | undefined, aliases: Json | undefined): Columns | undefined {
  const names = Array.isArray(aliases) ? aliases.map((a) => string(a).toLowerCase()) : [];
  if (names.length === 0 || columns === undefined) return columns;
  const types = [...columns.values()];
  return new Map([...names.map((n, i): [string, Ty] => [n, types[i] ?? 'unknown']), ...[...columns].slice(names.length)]);
}

// ── the final check ───────────────────────────────────────────────────────────────────

const STORED_TABLES = new Set([...Object.values(EVENTS), ...Object.values(DIMS), 'rollup_state', ...['minute', 'hour', 'day', 'month'].flatMap((g) => [`verifications_rollup_${g}`, `ratelimits_rollup_${g}`])]);

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