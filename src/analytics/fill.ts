// ClickHouse's `ORDER BY col WITH FILL [FROM a] [TO b] [STEP s]` (Unkey's docs fill the gaps
// of a time series with it): the rows of the query, plus a row for every step from a (the
// column's least value when left out) up to b (exclusive; the greatest value, inclusive,
// when left out) that the query has no row for, its other columns at their type's default
// (0, '', false, []), all ordered by the column.
//
// DuckDB has no such clause, so the query's text is split here (splitFill) before it is
// parsed: the clause is cut out, the rest is translated as any query (dialect.ts), and the
// bounds are translated as a SELECT of their own; withFill then wraps the translated query
// with generate_series. Only what the clause says is read from the text: the column it
// follows, which must be a column of the query's result, and its FROM, TO and STEP.
import type { DuckDBConnection, DuckDBValue } from '@duckdb/node-api';
import { DuckDBDateValue, DuckDBTimestampValue } from '@duckdb/node-api';
import { invalidAnalyticsQuery, queryRowsLimitExceeded } from '../errors/errors.js';
import { skipQuoted } from './parametric.js';

export interface Fill {
  /** The ORDER BY item the clause follows (a column of the result). */
  column: string;
  descending: boolean;
  from: string | undefined;
  to: string | undefined;
  step: string | undefined;
}

/** A span of the text outside strings, quoted names and comments, at parenthesis depth 0. */
function topLevel(text: string): boolean[] {
  const top: boolean[] = [];
  let depth = 0;
  for (let i = 0; i < text.length; ) {
    const c = text[i] as string;
    const skipped = Math.min(skipQuoted(text, i), text.length);
    if (skipped !== i) {
      for (; i < skipped; i++) top[i] = false;
      continue;
    }
    if (c === '(') depth++;
    top[i] = depth === 0 && c !== ')';
    if (c === ')') depth--;
    i++;
  }
  return top;
}

/** The first match of `word` from `from` on that starts in the top-level text. */
function findTop(text: string, top: boolean[], word: RegExp, from = 0): RegExpExecArray | undefined {
  const re = new RegExp(word.source, 'gi');
  re.lastIndex = from;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) if (top[m.index] === true) return m;
  return undefined;
}

/** What ends the clause: the next ORDER BY item, LIMIT, OFFSET, SETTINGS, `;` or the end. */
const CLAUSE_END = /,|\bLIMIT\b|\bOFFSET\b|\bSETTINGS\b|;/;
const FILL_PART = /\b(FROM|TO|STEP|STALENESS|INTERPOLATE)\b/;

/**
 * The query without its WITH FILL clause, and the clause; undefined when it has none. 400
 * for a clause keyward does not take (two of them, STALENESS, INTERPOLATE, a fill on an
 * expression rather than a column).
 */
export function splitFill(query: string): { query: string; fill: Fill } | undefined {
  const top = topLevel(query);
  const at = findTop(query, top, /\bWITH\s+FILL\b/);
  if (at === undefined) return undefined;
  if (findTop(query, top, /\bWITH\s+FILL\b/, at.index + at[0].length) !== undefined) throw invalidAnalyticsQuery('more than one ORDER BY … WITH FILL', 'fill one column');
  // The item it follows: back to the ORDER BY or the comma before it.
  const before = query.slice(0, at.index);
  const orderBy = findLast(before, top, /\bORDER\s+BY\b/);
  if (orderBy === undefined) throw invalidAnalyticsQuery('WITH FILL outside an ORDER BY', 'write ORDER BY <column> WITH FILL');
  const comma = findLast(before, top, /,/, orderBy.index);
  const itemStart = comma === undefined ? orderBy.index + orderBy[0].length : comma.index + 1;
  const item = before.slice(itemStart).trim();
  const direction = /\s+(ASC|DESC)$/i.exec(item);
  const column = unquote((direction === null ? item : item.slice(0, direction.index)).trim());
  if (column === undefined) throw invalidAnalyticsQuery(`WITH FILL follows ${JSON.stringify(item)}, not a column of the result`, 'alias the expression in the SELECT list and fill that alias');
  // Its parts, up to what ends it.
  const rest = at.index + at[0].length;
  const end = findTop(query, top, CLAUSE_END, rest)?.index ?? query.length;
  const parts: Record<string, string> = {};
  let cursor = rest;
  let current: string | undefined;
  for (let m = findTop(query, top, FILL_PART, cursor); m !== undefined && m.index < end; m = findTop(query, top, FILL_PART, cursor)) {
    if (current !== undefined) parts[current] = query.slice(cursor, m.index).trim();
    else if (query.slice(cursor, m.index).trim() !== '') throw invalidAnalyticsQuery(`WITH FILL is followed by ${JSON.stringify(query.slice(cursor, m.index).trim())}`, 'write WITH FILL [FROM a] [TO b] [STEP s]');
    current = (m[1] as string).toUpperCase();
    if (current === 'STALENESS' || current === 'INTERPOLATE') throw invalidAnalyticsQuery(`WITH FILL … ${current} is not supported`, 'drop it');
    if (parts[current] !== undefined) throw invalidAnalyticsQuery(`WITH FILL names ${current} twice`);
    cursor = m.index + m[0].length;
  }
  if (current !== undefined) parts[current] = query.slice(cursor, end).trim();
  else if (query.slice(cursor, end).trim() !== '') throw invalidAnalyticsQuery(`WITH FILL is followed by ${JSON.stringify(query.slice(cursor, end).trim())}`, 'write WITH FILL [FROM a] [TO b] [STEP s]');
  for (const [name, text] of Object.entries(parts)) if (text === '') throw invalidAnalyticsQuery(`WITH FILL ${name} needs a value`);
  return {
    query: `${query.slice(0, at.index)} ${query.slice(end)}`,
    fill: { column, descending: direction?.[1]?.toUpperCase() === 'DESC', from: parts.FROM, to: parts.TO, step: parts.STEP },
  };
}

function findLast(text: string, top: boolean[], word: RegExp, from = 0): RegExpExecArray | undefined {
  let last: RegExpExecArray | undefined;
  for (let m = findTop(text, top, word, from); m !== undefined; m = findTop(text, top, word, m.index + Math.max(1, m[0].length))) last = m;
  return last;
}

/** A column name as written (plain, or in double quotes); undefined for an expression. */
function unquote(text: string): string | undefined {
  if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(text)) return text;
  const quoted = /^"((?:[^"]|"")+)"$/.exec(text);
  return quoted === null ? undefined : (quoted[1] as string).replaceAll('""', '"');
}

// ── the filled query ─────────────────────────────────────────────────────────────────

const UNITS = { SECOND: 1_000, MINUTE: 60_000, HOUR: 3_600_000, DAY: 86_400_000, WEEK: 604_800_000, MONTH: 2_592_000_000, YEAR: 31_536_000_000 } as const;
type Unit = keyof typeof UNITS;

/** STEP as a count of a unit: `INTERVAL n UNIT` (also `INTERVAL 'n UNIT'`, toIntervalDay(n)…), or a number (seconds of a DateTime, days of a Date, units of a number). */
function parseStep(step: string | undefined): { n: number; unit: Unit | undefined } {
  if (step === undefined) return { n: 1, unit: undefined };
  const text = step.trim();
  const interval = /^INTERVAL\s+'?\s*(\d+)\s+(SECOND|MINUTE|HOUR|DAY|WEEK|MONTH|YEAR)S?\s*'?$/i.exec(text);
  const call = /^toInterval(Second|Minute|Hour|Day|Week|Month|Year)\s*\(\s*(\d+)\s*\)$/i.exec(text);
  const [count, unit] = interval !== null ? [interval[1], interval[2]] : call !== null ? [call[2], call[1]] : [text, undefined];
  const n = Number(count);
  if (/^\d+$/.test(count ?? '') && Number.isSafeInteger(n) && n > 0) return { n, unit: unit === undefined ? undefined : (unit.toUpperCase() as Unit) };
  throw invalidAnalyticsQuery(`WITH FILL STEP ${text} is not a positive whole number or INTERVAL n UNIT`, 'write STEP INTERVAL 1 DAY, or STEP 1');
}

type Kind = 'timestamp' | 'date' | 'number';

/** The kind of a result column's DuckDB type, for filling; undefined when it cannot be filled. */
function kindOf(type: string): Kind | undefined {
  if (/^TIMESTAMP$/i.test(type)) return 'timestamp';
  if (/^DATE$/i.test(type)) return 'date';
  if (/^(U?(TINY|SMALL|BIG|HUGE)?INT(EGER)?|DOUBLE|FLOAT|REAL|DECIMAL\(\d+,\d+\))$/i.test(type)) return 'number';
  return undefined;
}

/**
 * The default ClickHouse fills a column of this type with, as a literal the UNION casts to
 * the column's type (a type's text is never written into the SQL: a struct's field names are
 * the query's own).
 */
function defaultOf(type: string): string {
  if (kindOf(type) === 'number') return '0';
  if (/^VARCHAR$/i.test(type)) return "''";
  if (/^BOOLEAN$/i.test(type)) return 'false';
  if (/^(VARCHAR|U?(TINY|SMALL|BIG)?INT(EGER)?|DOUBLE)\[\]$/i.test(type)) return '[]';
  if (/^TIMESTAMP$/i.test(type)) return "TIMESTAMP '1970-01-01 00:00:00'";
  if (/^DATE$/i.test(type)) return "DATE '1970-01-01'";
  return 'NULL';
}

const ident = (name: string): string => `"${name.replaceAll('"', '""')}"`;

/** A bound as milliseconds (a DateTime or Date) or a number; undefined for NULL. */
function boundValue(v: DuckDBValue): number | undefined {
  if (v === null) return undefined;
  if (v instanceof DuckDBTimestampValue) return Number(v.micros / 1000n);
  if (v instanceof DuckDBDateValue) return v.days * 86_400_000;
  if (typeof v === 'number' || typeof v === 'bigint') return Number(v);
  const n = Number(v);
  return Number.isFinite(n) ? n : undefined;
}

function sqlBound(kind: Kind, value: number): string {
  if (kind === 'number') return String(value);
  const iso = new Date(value).toISOString().replace('T', ' ').replace('Z', '');
  return kind === 'date' ? `DATE '${iso.slice(0, 10)}'` : `TIMESTAMP '${iso}'`;
}

/**
 * `inner` (the translated query without its clause) filled as `fill` says. `translateBounds`
 * translates `SELECT <from> AS f, <to> AS t` as any query. 422 query_rows_limit_exceeded
 * when the fill alone would make more than `maxRows` rows.
 */
export async function withFill(con: DuckDBConnection, inner: string, fill: Fill, translateBounds: (select: string) => Promise<string>, maxRows: number): Promise<string> {
  const columns = (await con.runAndReadAll(`DESCRIBE ${inner}`)).getRows().map(([name, type]) => ({ name: String(name), type: String(type) }));
  const target = columns.find((c) => c.name === fill.column) ?? columns.find((c) => c.name.toLowerCase() === fill.column.toLowerCase());
  if (target === undefined) throw invalidAnalyticsQuery(`WITH FILL fills ${JSON.stringify(fill.column)}, which is not a column of the result (${columns.map((c) => c.name).join(', ')})`, 'fill a column the SELECT list names');
  const kind = kindOf(target.type);
  if (kind === undefined) throw invalidAnalyticsQuery(`WITH FILL fills ${JSON.stringify(target.name)}, a ${target.type}: only a DateTime, a Date or a number can be filled`);
  const step = parseStep(fill.step);
  if (kind === 'number' && step.unit !== undefined) throw invalidAnalyticsQuery(`WITH FILL STEP ${fill.step ?? ''} is an interval, but ${target.name} is a number`, 'write STEP <number>');
  const col = ident(target.name);
  // The bounds: as written, or the least and greatest value of the result.
  // The result's least and greatest values are read (running the query) only when a bound is left out.
  const given = fill.from !== undefined || fill.to !== undefined ? (await con.runAndReadAll(await translateBounds(`SELECT ${fill.from ?? 'NULL'} AS f, ${fill.to ?? 'NULL'} AS t`))).getRows()[0] : undefined;
  const seen = fill.from === undefined || fill.to === undefined ? (await con.runAndReadAll(`SELECT min(${col}), max(${col}) FROM (${inner})`)).getRows()[0] : undefined;
  const from = boundValue((fill.from !== undefined ? given?.[0] : seen?.[0]) ?? null);
  // Left out, TO is the greatest value, which has its row already.
  const to = boundValue((fill.to !== undefined ? given?.[1] : seen?.[1]) ?? null);
  if (from === undefined || to === undefined || to <= from) return `SELECT * FROM (${inner}) ORDER BY ${col}${fill.descending ? ' DESC' : ''}`;
  const stepMs = kind === 'number' ? step.n : step.unit !== undefined ? step.n * UNITS[step.unit] : step.n * (kind === 'date' ? 86_400_000 : 1_000);
  const rows = Math.ceil((to - from) / stepMs);
  if (rows > maxRows) throw queryRowsLimitExceeded(rows, maxRows);
  const interval = kind === 'number' ? String(step.n) : `INTERVAL ${step.n} ${step.unit ?? (kind === 'date' ? 'DAY' : 'SECOND')}`;
  // A Date's series runs over timestamps (generate_series has no DATE form), cast back by `value`.
  const seriesKind = kind === 'number' ? 'number' : 'timestamp';
  const series = `generate_series(${sqlBound(seriesKind, from)}, ${sqlBound(seriesKind, to)}, ${interval})`;
  const value = `CAST(kw_fill_series.v AS ${target.type})`;
  const generated = columns.map((c) => (c === target ? `${value} AS ${col}` : `${defaultOf(c.type)} AS ${ident(c.name)}`)).join(', ');
  return [
    `WITH kw_fill_rows AS (${inner})`,
    `SELECT * FROM (SELECT * FROM kw_fill_rows UNION ALL`,
    ` SELECT ${generated} FROM ${series} AS kw_fill_series(v)`,
    ` WHERE ${value} < ${sqlBound(kind, to)} AND ${value} NOT IN (SELECT ${col} FROM kw_fill_rows WHERE ${col} IS NOT NULL))`,
    `ORDER BY ${col}${fill.descending ? ' DESC' : ''}`,
  ].join('\n');
}
