// ClickHouse's functions as DuckDB calls (dialect.ts rewrites each call of the query's tree
// through CLICKHOUSE), and the names ClickHouse gives unaliased columns (clickhouseName), so
// that rows read as Unkey's do.
import { and, array, asTimestamp, canonical, caseWhen, cast, type CastType, coalesce, columnRef, compare, constant, type DuckFunction, fn, fromSeconds, int, type Json, type Node, object, present, shape, string, text, type Ty, type Typed } from './sqlTree.js';
import { invalidAnalyticsQuery } from '../errors/errors.js';

/** A call being rewritten: its FUNCTION node (children already translated) and its typed arguments. */
interface Call {
  node: Node;
  args: Typed[];
  /** The SELECT the call is in (undefined outside one), where arrayJoin() hoists its array. */
  select: SelectInArrayJoin | undefined;
}
/** A SELECT of the query: its number, and the arrayJoin() calls hoisted to its FROM (dialect.ts joins them). */
export interface SelectInArrayJoin {
  id: number;
  arrayJoins: ArrayJoin[];
}
export interface ArrayJoin {
  /** The array's node, canonical: one join per distinct array. */
  key: string;
  alias: string;
  array: Node;
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
export const CLICKHOUSE: Record<string, Rewrite> = {
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
  const select = c.select;
  if (select === undefined) throw invalidAnalyticsQuery('arrayJoin() is supported in a SELECT only');
  const array = arg(c, 0).node;
  const key = canonical(array);
  let join = select.arrayJoins.find((j) => j.key === key);
  if (join === undefined) select.arrayJoins.push((join = { key, alias: `__kw_array_join_${select.id}_${select.arrayJoins.length + 1}`, array }));
  return { node: columnRef(join.alias, 'value'), ty: 'unknown' };
}

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
