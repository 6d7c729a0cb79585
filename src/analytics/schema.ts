// The analytics database's tables (docs/analytics.md): what keyward stores in DuckDB, and
// the public tables Unkey's queries name, each a view over them.
//
// Stored (internal names, never visible to a query):
//  - `verification_events`, `ratelimit_events`: one row per decision (the raw events), the
//    fields a batch holds few of (workspace, key space or namespace, outcome, …) as the
//    number of their `dim`;
//  - `verification_dims`, `ratelimit_dims`: each distinct tuple of those fields once, by id
//    (database.ts numbers them as they first arrive);
//  - `verifications_rollup_{minute,hour,day,month}`, `ratelimits_rollup_{…}`: aggregates of
//    the periods rolled up so far (`rollup_state`), one row per group and period, written
//    once a period is over (database.ts roll) from the next finer grain: raw rows → minutes →
//    hours → days → months. An event that arrives after its period was rolled up is added
//    to each rollup already past it, as a row of its own;
//  - `rollup_state`: per grain, `through` (Unix ms): that grain's stored rows hold every
//    event before it, and none after. `through` of the hour grain falls on a minute, the
//    day's on an hour, the month's on a day, so that a finer row is wholly before or after.
// Public (Unkey's names): the raw events joined with their dims; each rollup is its stored
// rows plus the next finer grain's (public) rows since its `through`, aggregated: exact as
// soon as an event is in.

/** Unkey's public tables, by the procedure that may read them. */
export const VERIFICATION_TABLES = ['key_verifications_v1', 'key_verifications_per_minute_v1', 'key_verifications_per_hour_v1', 'key_verifications_per_day_v1', 'key_verifications_per_month_v1'] as const;
export const RATELIMIT_TABLES = ['ratelimits_v1', 'ratelimits_per_minute_v1', 'ratelimits_per_hour_v1', 'ratelimits_per_day_v1', 'ratelimits_per_month_v1'] as const;
export type PublicTable = (typeof VERIFICATION_TABLES)[number] | (typeof RATELIMIT_TABLES)[number];

export const GRAINS = ['minute', 'hour', 'day', 'month'] as const;
export type Grain = (typeof GRAINS)[number];

export type Kind = 'verifications' | 'ratelimits';

/** The columns a rollup groups by, and its measures. */
export const ROLLUP_GROUPS: Record<Kind, string> = {
  verifications: 'workspace_id, key_space_id, external_id, key_id, outcome, region, source, app_id, tags',
  ratelimits: 'workspace_id, namespace_id, identifier',
};
const MEASURES: Record<Kind, readonly string[]> = {
  verifications: ['count', 'spent_credits'],
  ratelimits: ['passed', 'total', 'passed_tokens', 'total_tokens', 'latency_sum', 'latency_count', 'latency_points'],
};

/**
 * How many latencies a rate-limit rollup row keeps for quantiles (`latency_points`): all of
 * its decisions' when it has at most this many, else this many evenly spaced quantiles of
 * them (kw_points; the last at 99.5%, so that a p99 is read between two of them). Rows
 * merged into a coarser grain, or by a query, pool their points weighted by the decisions
 * behind them (kw_pooled): an approximation beyond this many decisions a row, as ClickHouse's
 * t-digest states are one.
 */
export const LATENCY_POINTS = 100;

/** The measures of raw rows (`time` in ms), per group. */
export const RAW_MEASURES: Record<Kind, string> = {
  verifications: 'count(*) AS count, sum(spent_credits) AS spent_credits',
  ratelimits:
    'count(*) FILTER (WHERE passed) AS passed, count(*) AS total, coalesce(sum(tokens) FILTER (WHERE passed), 0) AS passed_tokens, sum(tokens) AS total_tokens, ' +
    'sum(latency) AS latency_sum, count(*) AS latency_count, kw_points(list(latency)) AS latency_points',
};

/** The latency states of the rollup rows of a group, as kw_pooled takes them: `{p: points, n: decisions}` each (rows older than the states hold none). */
const LATENCY_STATES = "list({'p': latency_points, 'n': latency_count}) FILTER (WHERE latency_points IS NOT NULL)";

/** A measure of finer rollup rows, merged: summed, or (latency points) pooled by weight. */
const merged = (m: string): string => (m === 'latency_points' ? `kw_points(kw_pooled(${LATENCY_STATES}, sum(latency_count), count(latency_points)))` : `sum(${m})`);

/** The measures of finer rollup rows, merged. */
export const MERGED_MEASURES = (kind: Kind): string => MEASURES[kind].map((m) => `${merged(m)} AS ${m}`).join(', ');

/** The type of a rollup's `time`: a DateTime for minutes and hours, a Date for days and months. */
function timeType(grain: Grain): 'TIMESTAMP' | 'DATE' {
  return grain === 'minute' || grain === 'hour' ? 'TIMESTAMP' : 'DATE';
}

/** A TIMESTAMP or DATE (SQL text, a finer rollup's `time` by default) cut to `grain`, in that grain's type. */
export function truncate(grain: Grain, column = 'time'): string {
  const cut = `date_trunc('${grain}', ${column})`;
  return timeType(grain) === 'DATE' ? `CAST(${cut} AS DATE)` : cut;
}

/** Unix ms (SQL text) as a value comparable with `grain`'s rows' time. */
export function rollupTime(grain: Grain, ms: string): string {
  const ts = `make_timestamp(${ms} * 1000)`;
  return timeType(grain) === 'DATE' ? `CAST(${ts} AS DATE)` : ts;
}

/** Raw rows (rawRows, SQL text) as rows of `grain`'s rollup: one per group and period. */
export function rawRollupRows(kind: Kind, grain: Grain, raw: string): string {
  return `SELECT ${bucketOf(grain, 'time')} AS time, ${ROLLUP_GROUPS[kind]}, ${RAW_MEASURES[kind]} FROM (${raw}) GROUP BY ALL`;
}

/** The grain each rollup is made from (minutes come from raw rows). */
export const FINER: Record<Exclude<Grain, 'minute'>, Grain> = { hour: 'minute', day: 'hour', month: 'day' };

/**
 * The macros of the latency states (docs/analytics.md, "Rate limits"), which every
 * connection creates for itself (database.ts): kw_points, a list of latencies as a rollup row
 * keeps it (LATENCY_POINTS); kw_pooled, the points of several rows as one list in which each
 * row weighs as its decisions do; kw_avg_merge / kw_quantiles, what avgMerge(latency_avg) and
 * quantilesTDigestMerge(levels)(latency_p75) are (clickhouse.ts). Temporary, never stored: a
 * macro created in the database lands in its write-ahead log, and DuckDB (1.5) fails to
 * replay that log after a kill -9 (an internal error: no default database while replaying).
 */
const QUANTILE_LEVELS = `[${Array.from({ length: LATENCY_POINTS }, (_, i) => (i + 0.5) / LATENCY_POINTS).join(', ')}]`;
export const CONNECTION_DDL: readonly string[] = [
  // Beyond LATENCY_POINTS values, the quantiles of a reservoir sample of 8,192 of them (exact up to that many): sorting a
  // hot identifier's minute of values (millions) cost 1.4 µs per event at the roll, the sample 0.06 (bench/HISTORY.md).
  `CREATE OR REPLACE TEMP MACRO kw_points(l) AS CASE WHEN len(l) <= ${LATENCY_POINTS} THEN list_sort(l) ELSE list_aggregate(l, 'reservoir_quantile', ${QUANTILE_LEVELS}, 8192) END`,
  // `m` of the sorted points `p` (m ≥ 1), evenly spaced by rank: `p` itself when m is its length, else each point repeated
  // or skipped, so that a row's points stand for its share of the decisions.
  'CREATE OR REPLACE TEMP MACRO kw_resample(p, m) AS CASE WHEN m = len(p) THEN p WHEN m < 1 THEN []::DOUBLE[] WHEN m = 1 THEN [p[(len(p) + 1) // 2]] ' +
    'ELSE list_select(p, list_transform(range(m::BIGINT), i -> 1 + round(i * (len(p) - 1) / (m - 1))::BIGINT)) END',
  // `states` ({p, n} each) with `total` decisions over `rows` rows, as one list of points: each row's resampled to its
  // share of LATENCY_POINTS × rows (to its n decisions when there are no more than that: then a row of all its latencies
  // gives them all). Unweighted, a row of ten decisions would weigh as much as one of a million.
  `CREATE OR REPLACE TEMP MACRO kw_pooled(states, total, rows) AS flatten(list_transform(states, s -> kw_resample(s.p, CASE WHEN total <= ${LATENCY_POINTS} * rows THEN s.n ELSE round(s.n * ${LATENCY_POINTS} * rows / total) END)))`,
  'CREATE OR REPLACE TEMP MACRO kw_avg_merge(x) AS sum(x.sum) / nullif(sum(x.count), 0)',
  "CREATE OR REPLACE TEMP MACRO kw_quantiles(states, levels) AS list_aggregate(kw_pooled(flatten(list(states)), sum(list_sum(list_transform(states, s -> s.n))), sum(len(states))), 'quantile_cont', levels)",
];

/** The stored tables of each kind's raw events, and of their dims. */
export const EVENTS: Record<Kind, string> = { verifications: 'verification_events', ratelimits: 'ratelimit_events' };
export const DIMS: Record<Kind, string> = { verifications: 'verification_dims', ratelimits: 'ratelimit_dims' };

/**
 * The fields of a dim: event_rows.rs's (the first 3 of a verification's, all 4 of a limit's),
 * then for a verification those every event of a node shares (database.ts adds them): its
 * region, the source and the app id.
 */
export const DIM_FIELDS: Record<Kind, readonly string[]> = {
  verifications: ['workspace_id', 'key_space_id', 'outcome', 'region', 'source', 'app_id'],
  ratelimits: ['workspace_id', 'namespace_id', 'namespace_name', 'override_id'],
};

/** The columns of each public raw table, in Unkey's order. */
const RAW_COLUMNS: Record<Kind, string> = {
  verifications: 'request_id, time, workspace_id, key_space_id, external_id, key_id, outcome, region, source, app_id, tags, spent_credits',
  ratelimits: 'request_id, time, workspace_id, namespace_id, identifier, passed, latency, override_id, "limit", remaining, reset_at, tokens',
};

/**
 * Request ids, each its own, compressed as text (FSST) when DuckDB writes rows into the
 * database file (a checkpoint), rather than by trying each method on every segment (a trial
 * of up to 0.2 µs of CPU per event, bench/HISTORY.md, 2026-11-29, night).
 */
const EACH_ITS_OWN = 'VARCHAR USING COMPRESSION fsst NOT NULL';

/** The DDL of a kind's dims table. */
const dimsDdl = (kind: Kind): string => `CREATE TABLE IF NOT EXISTS ${DIMS[kind]} (id INTEGER PRIMARY KEY, ${DIM_FIELDS[kind].map((f) => `${f} VARCHAR NOT NULL`).join(', ')})`;

/** The DDL of the stored tables (idempotent). `time` of raw events is Unix milliseconds, as Unkey's. */
export const STORED_DDL: readonly string[] = [
  dimsDdl('verifications'),
  `CREATE TABLE IF NOT EXISTS verification_events (
    request_id ${EACH_ITS_OWN}, time BIGINT NOT NULL, dim INTEGER NOT NULL, external_id VARCHAR NOT NULL,
    key_id VARCHAR NOT NULL, tags VARCHAR[] NOT NULL, spent_credits BIGINT NOT NULL)`,
  dimsDdl('ratelimits'),
  `CREATE TABLE IF NOT EXISTS ratelimit_events (
    request_id ${EACH_ITS_OWN}, time BIGINT NOT NULL, dim INTEGER NOT NULL, identifier VARCHAR NOT NULL, passed BOOLEAN NOT NULL,
    latency DOUBLE NOT NULL, "limit" BIGINT NOT NULL, remaining BIGINT NOT NULL, reset_at BIGINT NOT NULL, tokens BIGINT NOT NULL)`,
  ...GRAINS.map(
    (g) => `CREATE TABLE IF NOT EXISTS verifications_rollup_${g} (
    time ${timeType(g)} NOT NULL, workspace_id VARCHAR NOT NULL, key_space_id VARCHAR NOT NULL,
    external_id VARCHAR NOT NULL, key_id VARCHAR NOT NULL, outcome VARCHAR NOT NULL, region VARCHAR NOT NULL,
    source VARCHAR NOT NULL, app_id VARCHAR NOT NULL, tags VARCHAR[] NOT NULL, count BIGINT NOT NULL, spent_credits BIGINT NOT NULL)`,
  ),
  `CREATE TABLE IF NOT EXISTS rollup_state (grain VARCHAR PRIMARY KEY, through BIGINT NOT NULL)`,
  ...GRAINS.map(
    (g) => `CREATE TABLE IF NOT EXISTS ratelimits_rollup_${g} (
    time ${timeType(g)} NOT NULL, workspace_id VARCHAR NOT NULL, namespace_id VARCHAR NOT NULL,
    identifier VARCHAR NOT NULL, passed BIGINT NOT NULL, total BIGINT NOT NULL, passed_tokens BIGINT NOT NULL, total_tokens BIGINT NOT NULL)`,
  ),
  // The latency states, added to rollups of databases written before them too (their older
  // rows hold none: no decision's latency counts in them, and their points are NULL, which
  // LATENCY_STATES leaves out). No list DEFAULT: DuckDB (1.5) cannot replay an ADD COLUMN with one from
  // its write-ahead log after a kill -9 (an internal error), and the database would not open.
  ...GRAINS.flatMap((g) => [
    `ALTER TABLE ratelimits_rollup_${g} ADD COLUMN IF NOT EXISTS latency_sum DOUBLE DEFAULT 0`,
    `ALTER TABLE ratelimits_rollup_${g} ADD COLUMN IF NOT EXISTS latency_count BIGINT DEFAULT 0`,
    `ALTER TABLE ratelimits_rollup_${g} ADD COLUMN IF NOT EXISTS latency_points DOUBLE[]`,
  ]),
];

/**
 * The raw rows of `kind` as the public raw table shows them (RAW_COLUMNS): those of dims that
 * meet `scope` (a condition on the dims' fields: a query's scope; none: every dim) and, of
 * those, the events that meet `when` (a condition on the events' own columns, such as `time`,
 * applied where they are read, so that DuckDB skips what it rules out before the join).
 * `events`: the stored table, or a batch of rows like its rows (database.ts, late events).
 * Each stored table is read by a SELECT of its own whose WHERE holds the scope (dialect.ts
 * assertConfined checks that of every read), the events' through the ids of the dims it allows.
 */
export function rawRows(kind: Kind, { scope, events = EVENTS[kind], when }: { scope?: string; events?: string; when?: string } = {}): string {
  const conditions = [...(when === undefined ? [] : [`(${when})`]), ...(scope === undefined ? [] : [`dim IN (SELECT id FROM ${DIMS[kind]} WHERE ${scope})`])];
  const rows = conditions.length === 0 ? events : `(SELECT * FROM ${events} WHERE ${conditions.join(' AND ')})`;
  const dims = scope === undefined ? DIMS[kind] : `(SELECT * FROM ${DIMS[kind]} WHERE ${scope})`;
  return `SELECT ${RAW_COLUMNS[kind]} FROM ${rows} AS e JOIN ${dims} AS d ON d.id = e.dim`;
}

/** DuckDB's truncation of a grain, applied to a raw event's time (ms). */
export function bucketOf(grain: Grain, timeMsColumn: string): string {
  return truncate(grain, `make_timestamp(${timeMsColumn} * 1000)`);
}

/**
 * The SELECT behind each public table, over the stored ones, confined to `where` (a
 * condition on workspace_id and key_space_id / namespace_id, built by the caller from the
 * root key's scope). Its columns are the public table's, in Unkey's order.
 */
export function publicSelect(table: PublicTable, where: string): string {
  if (table === 'key_verifications_v1') return rawRows('verifications', { scope: where });
  if (table === 'ratelimits_v1') return rawRows('ratelimits', { scope: where });
  const grain = /_per_(minute|hour|day|month)_v1$/.exec(table)?.[1] as Grain;
  const kind: Kind = table.startsWith('key_verifications') ? 'verifications' : 'ratelimits';
  const totals = MEASURES[kind].filter((m) => !m.startsWith('latency_')).map((m) => `CAST(sum(${m}) AS BIGINT) AS ${m}`);
  // Unkey's latency states: avgMerge reads latency_avg, quantilesTDigestMerge latency_p75 / _p99 (the states of the
  // rows summed here, {p, n} each; kw_quantiles pools them with the other rows' it merges, by weight).
  const states = kind === 'ratelimits' ? [`{'sum': sum(latency_sum), 'count': CAST(sum(latency_count) AS BIGINT)} AS latency_avg`, ...['latency_p75', 'latency_p99'].map((c) => `${LATENCY_STATES} AS ${c}`)] : [];
  return `SELECT time, ${ROLLUP_GROUPS[kind]}, ${[...totals, ...states].join(', ')} FROM (${rollupRows(kind, grain, where)}) GROUP BY ALL`;
}

/** The stored rows of `grain` and, since its `through`, the finer grain's, cut to `grain` (partial rows, not yet summed). */
function rollupRows(kind: Kind, grain: Grain, where: string): string {
  const columns = `${ROLLUP_GROUPS[kind]}, ${MEASURES[kind].join(', ')}`;
  const through = `(SELECT through FROM rollup_state WHERE grain = '${grain}')`;
  const stored = `SELECT time, ${columns} FROM ${kind}_rollup_${grain} WHERE ${where}`;
  if (grain === 'minute') {
    return `${stored} UNION ALL ${rawRollupRows(kind, 'minute', rawRows(kind, { scope: where, when: `time >= ${through}` }))}`;
  }
  return `${stored} UNION ALL SELECT ${truncate(grain)} AS time, ${columns} FROM (${rollupRows(kind, FINER[grain], where)}) WHERE time >= ${rollupTime(FINER[grain], through)}`;
}
