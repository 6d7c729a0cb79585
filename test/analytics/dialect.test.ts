// src/analytics/dialect.ts against an in-memory DuckDB holding the stored tables
// (schema.ts), with a few events of two workspaces: every SQL query of Unkey's analytics docs
// translates and runs (or is refused as documented below), answers are checked on the seeded
// rows, nothing outside the scope is ever read, and hostile queries get their error code.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { MAX_SUBQUERY_NESTING, PublicViews, translate, type Scope, type SqlParser } from '../../src/analytics/dialect.js';
import { splitFill, withFill } from '../../src/analytics/fill.js';
import { bucketOf, CONNECTION_DDL, GRAINS, publicSelect, rawRows, STORED_DDL, type PublicTable } from '../../src/analytics/schema.js';
import { moveOldRawTables, sqlParser } from '../../src/analytics/database.js';
import { ApiError } from '../../src/errors/apiError.js';
import type { ErrorName } from '../../src/errors/catalogue.js';

const VERIFY: Scope = { workspaceId: 'ws_a', kind: 'verifications' };
const RATELIMIT: Scope = { workspaceId: 'ws_a', kind: 'ratelimits' };

let instance: DuckDBInstance;
let con: DuckDBConnection;
let parser: SqlParser;

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

beforeAll(async () => {
  // As the analytics database is opened (database.ts): no files, no extensions.
  instance = await DuckDBInstance.create(':memory:', { enable_external_access: 'false', autoinstall_known_extensions: 'false', autoload_known_extensions: 'false' });
  con = await instance.connect();
  for (const ddl of [...CONNECTION_DDL, ...STORED_DDL]) await con.run(ddl);
  parser = sqlParser(con);

  // Seeded as a database written before dims held them (every field as text in every row), then moved as opening one does.
  await con.run(`CREATE TABLE verifications (request_id VARCHAR, time BIGINT, workspace_id VARCHAR, key_space_id VARCHAR, external_id VARCHAR, key_id VARCHAR,
    outcome VARCHAR, region VARCHAR, source VARCHAR, app_id VARCHAR, tags VARCHAR[], spent_credits BIGINT)`);
  await con.run(`CREATE TABLE ratelimits (request_id VARCHAR, time BIGINT, workspace_id VARCHAR, namespace_id VARCHAR, namespace_name VARCHAR, identifier VARCHAR,
    passed BOOLEAN, latency DOUBLE, override_id VARCHAR, "limit" BIGINT, remaining BIGINT, reset_at BIGINT, tokens BIGINT)`);
  const now = Date.now();
  const v = (id: string, ago: number, ws: string, ks: string, ext: string, key: string, outcome: string, tags: string[], credits: number, source = 'api', app = ''): string =>
    `('${id}', ${now - ago}, '${ws}', '${ks}', '${ext}', '${key}', '${outcome}', 'local', '${source}', '${app}', [${tags.map((t) => `'${t}'`).join(', ')}]::VARCHAR[], ${credits})`;
  await con.run(`INSERT INTO verifications (request_id, time, workspace_id, key_space_id, external_id, key_id, outcome, region, source, app_id, tags, spent_credits) VALUES
    ${v('r1', 10 * MINUTE, 'ws_a', 'ks_1', 'user_123', 'key_1', 'VALID', ['path=/api/v1/users', 'environment=production', 'team=backend'], 5)},
    ${v('r2', 20 * MINUTE, 'ws_a', 'ks_1', 'user_123', 'key_1', 'RATE_LIMITED', ['path=/api/v1/users'], 0)},
    ${v('r3', 2 * HOUR, 'ws_a', 'ks_2', 'user_456', 'key_2', 'VALID', ['path=/api/v1/posts', 'environment=prod', 'tier=premium'], 3)},
    ${v('r4', 3 * DAY, 'ws_a', 'ks_2', '', 'key_3', 'USAGE_EXCEEDED', [], 0)},
    ${v('r5', 40 * DAY, 'ws_a', 'ks_1', 'user_123', 'key_1', 'VALID', [], 2, 'gateway', 'app_1')},
    ${v('r6', 5 * MINUTE, 'ws_a', 'ks_3', 'user_123', 'key_6', 'VALID', ['path=/api/v1/users'], 50)},
    ${v('w1', 10 * MINUTE, 'ws_b', 'ks_9', 'user_123', 'key_9', 'VALID', ['path=/api/v1/users', 'environment=production', 'team=backend'], 100)}`);
  const r = (id: string, ago: number, ws: string, ns: string, identifier: string, passed: boolean, tokens: number): string =>
    `('${id}', ${now - ago}, '${ws}', '${ns}', '${ns}_name', '${identifier}', ${passed}, 1.5, '', 10, 5, ${now + MINUTE}, ${tokens})`;
  await con.run(`INSERT INTO ratelimits (request_id, time, workspace_id, namespace_id, namespace_name, identifier, passed, latency, override_id, "limit", remaining, reset_at, tokens) VALUES
    ${r('l1', 10 * MINUTE, 'ws_a', 'rlns_1234', 'customer_123', true, 1)},
    ${r('l2', 20 * MINUTE, 'ws_a', 'rlns_1234', 'customer_123', false, 2)},
    ${r('l3', 30 * MINUTE, 'ws_a', 'rlns_5678', 'customer_456', true, 1)},
    ${r('m1', 10 * MINUTE, 'ws_b', 'rlns_9999', 'customer_123', true, 7)}`);
  await moveOldRawTables(con);
  for (const g of GRAINS) {
    await con.run(`INSERT INTO verifications_rollup_${g} (time, workspace_id, key_space_id, external_id, key_id, outcome, region, source, app_id, tags, count, spent_credits)
      SELECT ${bucketOf(g, 'time')}, workspace_id, key_space_id, external_id, key_id, outcome, region, source, app_id, tags, count(*), sum(spent_credits) FROM (${rawRows('verifications')}) GROUP BY ALL`);
    await con.run(`INSERT INTO ratelimits_rollup_${g} (time, workspace_id, namespace_id, identifier, passed, total, passed_tokens, total_tokens, latency_sum, latency_count, latency_points)
      SELECT ${bucketOf(g, 'time')}, workspace_id, namespace_id, identifier, count(*) FILTER (WHERE passed), count(*), coalesce(sum(tokens) FILTER (WHERE passed), 0), sum(tokens),
        sum(latency), count(*), kw_points(list(latency)) FROM (${rawRows('ratelimits')}) GROUP BY ALL`);
  }
});

afterAll(() => {
  con.closeSync();
  instance.closeSync();
});

async function rows(query: string, scope: Scope = VERIFY): Promise<Record<string, unknown>[]> {
  return (await con.runAndReadAll(await translate(query, scope, parser))).getRowObjectsJson() as Record<string, unknown>[];
}

/** The rows of a query with ORDER BY … WITH FILL, as the analytics worker runs it. */
async function filledRows(query: string, scope: Scope = VERIFY, maxRows = 10_000): Promise<Record<string, unknown>[]> {
  const split = splitFill(query);
  if (split === undefined) throw new Error(`no WITH FILL in ${query}`);
  const sql = await withFill(con, await translate(split.query, scope, parser), split.fill, (select) => translate(select, scope, parser), maxRows);
  return (await con.runAndReadAll(sql)).getRowObjectsJson() as Record<string, unknown>[];
}

/** The ApiError translate() refuses `query` with. */
async function refusal(query: string, scope: Scope = VERIFY): Promise<ApiError> {
  try {
    const sql = await translate(query, scope, parser);
    throw new Error(`translated instead of refused: ${sql}`);
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
}

/** The public table's columns as keyward stores them (publicSelect's). */
async function publicColumns(table: PublicTable): Promise<string[]> {
  return (await con.runAndReadAll(`DESCRIBE ${publicSelect(table, 'true')}`)).getRowObjectsJson().map((r) => String(r.column_name));
}

// ── Unkey's documented queries ────────────────────────────────────────────────────────

interface DocQuery {
  /** docs/product/… file of unkeyed/unkey, and the example's heading. */
  source: string;
  sql: string;
  kind?: Scope['kind'];
  /** ClickHouse-only syntax DuckDB cannot parse: refused with invalid_analytics_query naming it. */
  refused?: string;
  /** ORDER BY … WITH FILL: run as the worker runs it (src/analytics/fill.ts). */
  filled?: boolean;
  /** Columns Unkey's public table has and keyward's does not (yet): while missing, the run fails naming the first. */
  needs?: { table: PublicTable; columns: string[] };
  /** The example fails in ClickHouse too (a column Unkey's schema does not have, a missing GROUP BY): translation works, the run fails with this. */
  failsAnyway?: string;
}

const QE = 'platform/analytics/query-examples.mdx';
const QR = 'platform/analytics/quick-reference.mdx';
const SR = 'platform/analytics/schema-reference.mdx';
const GS = 'platform/analytics/getting-started.mdx';
const TS = 'platform/analytics/troubleshooting.mdx';
const GR = 'platform/analytics/get-ratelimits.mdx';
const ER = 'errors/user/bad_request';
/** The docs' WHERE fragments, completed into a query over `table`. */
const where = (table: string, fragment: string): string => `SELECT COUNT(*) AS n FROM ${table} ${fragment}`;
/** The docs' SELECT-list fragments, completed with a FROM. */
const raw = (selectList: string): string => `${selectList} FROM key_verifications_v1`;

const DOCUMENTED: DocQuery[] = [
  { source: `${QE} Using Queries in API Requests`, sql: `SELECT COUNT(*) as total\nFROM key_verifications_v1\nWHERE time >= now() - INTERVAL 7 DAY` },
  { source: `${QE} Total verifications in the last 7 days`, sql: `SELECT SUM(count) as total_verifications\nFROM key_verifications_per_day_v1\nWHERE time >= now() - INTERVAL 7 DAY` },
  { source: `${QE} Verifications by outcome`, sql: `SELECT\n  outcome,\n  SUM(count) as count\nFROM key_verifications_per_day_v1\nWHERE time >= now() - INTERVAL 30 DAY\nGROUP BY outcome\nORDER BY count DESC` },
  {
    source: `${QE} All outcomes in a single row`,
    sql: `SELECT\n  sumIf(count, outcome = 'VALID') AS valid,\n  sumIf(count, outcome = 'RATE_LIMITED') AS rateLimited,\n  sumIf(count, outcome = 'INVALID') AS invalid,\n  sumIf(count, outcome = 'NOT_FOUND') AS notFound,\n  sumIf(count, outcome = 'FORBIDDEN') AS forbidden,\n  sumIf(count, outcome = 'USAGE_EXCEEDED') AS usageExceeded,\n  sumIf(count, outcome = 'UNAUTHORIZED') AS unauthorized,\n  sumIf(count, outcome = 'DISABLED') AS disabled,\n  sumIf(count, outcome = 'INSUFFICIENT_PERMISSIONS') AS insufficientPermissions,\n  sumIf(count, outcome = 'EXPIRED') AS expired,\n  SUM(count) AS total\nFROM key_verifications_per_day_v1\nWHERE time >= now() - INTERVAL 30 DAY`,
  },
  {
    source: `${QE} All outcomes per key`,
    sql: `SELECT\n  key_id,\n  sumIf(count, outcome = 'VALID') AS valid,\n  sumIf(count, outcome = 'RATE_LIMITED') AS rateLimited,\n  sumIf(count, outcome = 'INVALID') AS invalid,\n  sumIf(count, outcome = 'NOT_FOUND') AS notFound,\n  sumIf(count, outcome = 'FORBIDDEN') AS forbidden,\n  sumIf(count, outcome = 'USAGE_EXCEEDED') AS usageExceeded,\n  sumIf(count, outcome = 'UNAUTHORIZED') AS unauthorized,\n  sumIf(count, outcome = 'DISABLED') AS disabled,\n  sumIf(count, outcome = 'INSUFFICIENT_PERMISSIONS') AS insufficientPermissions,\n  sumIf(count, outcome = 'EXPIRED') AS expired,\n  SUM(count) AS total\nFROM key_verifications_per_day_v1\nWHERE time >= now() - INTERVAL 30 DAY\nGROUP BY key_id\nORDER BY total DESC\nLIMIT 100`,
  },
  { source: `${QE} Daily verification trend`, sql: `SELECT\n  time as date,\n  SUM(count) as verifications\nFROM key_verifications_per_day_v1\nWHERE time >= now() - INTERVAL 30 DAY\nGROUP BY date\nORDER BY date` },
  { source: `${QE} Hourly breakdown for today`, sql: `SELECT\n  time as hour,\n  outcome,\n  SUM(count) as verifications\nFROM key_verifications_per_hour_v1\nWHERE time >= toStartOfDay(now())\nGROUP BY time, outcome\nORDER BY time, outcome` },
  {
    source: `${QE} All users ranked by usage`,
    sql: `SELECT\n  external_id,\n  SUM(count) as total_verifications,\n  SUM(CASE WHEN outcome = 'VALID' THEN count ELSE 0 END) as successful,\n  SUM(CASE WHEN outcome = 'RATE_LIMITED' THEN count ELSE 0 END) as rate_limited\nFROM key_verifications_per_day_v1\nWHERE time >= now() - INTERVAL 30 DAY\n  AND external_id != ''\nGROUP BY external_id\nORDER BY total_verifications DESC\nLIMIT 100`,
  },
  {
    source: `${QE} Usage for a specific user`,
    sql: `SELECT\n  SUM(count) as total_verifications,\n  SUM(CASE WHEN outcome = 'VALID' THEN count ELSE 0 END) as successful,\n  SUM(CASE WHEN outcome = 'RATE_LIMITED' THEN count ELSE 0 END) as rate_limited\nFROM key_verifications_per_day_v1\nWHERE external_id = 'user_123'\n  AND time >= now() - INTERVAL 30 DAY`,
  },
  { source: `${QE} Top 10 users by API usage`, sql: `SELECT\n  external_id,\n  SUM(count) as total_verifications\nFROM key_verifications_per_day_v1\nWHERE time >= now() - INTERVAL 30 DAY\n  AND external_id != ''\nGROUP BY external_id\nORDER BY total_verifications DESC\nLIMIT 10` },
  { source: `${QE} Daily usage per user`, sql: `SELECT\n  external_id,\n  time as date,\n  SUM(count) as verifications\nFROM key_verifications_per_day_v1\nWHERE time >= now() - INTERVAL 30 DAY\nGROUP BY external_id, date\nORDER BY external_id, date` },
  {
    source: `${QE} Usage per keyspace`,
    sql: `SELECT\n  key_space_id,\n  SUM(count) as total_verifications,\n  SUM(CASE WHEN outcome = 'VALID' THEN count ELSE 0 END) as successful\nFROM key_verifications_per_day_v1\nWHERE time >= now() - INTERVAL 30 DAY\nGROUP BY key_space_id\nORDER BY total_verifications DESC`,
  },
  {
    source: `${QE} Usage for a specific keyspace`,
    sql: `SELECT\n  SUM(count) as total_verifications,\n  SUM(CASE WHEN outcome = 'VALID' THEN count ELSE 0 END) as successful,\n  SUM(CASE WHEN outcome = 'RATE_LIMITED' THEN count ELSE 0 END) as rate_limited,\n  SUM(CASE WHEN outcome = 'INVALID' THEN count ELSE 0 END) as invalid\nFROM key_verifications_per_day_v1\nWHERE key_space_id = 'ks_1234'\n  AND time >= now() - INTERVAL 30 DAY`,
  },
  {
    source: `${QE} Compare multiple keyspaces`,
    sql: `SELECT\n  key_space_id,\n  SUM(count) as verifications,\n  round(SUM(CASE WHEN outcome = 'VALID' THEN count ELSE 0 END) / SUM(count) * 100, 2) as success_rate\nFROM key_verifications_per_day_v1\nWHERE key_space_id IN ('ks_1234', 'ks_5678')\n  AND time >= now() - INTERVAL 7 DAY\nGROUP BY key_space_id`,
  },
  {
    source: `${QE} Usage per key`,
    sql: `SELECT\n  key_id,\n  SUM(count) as total_verifications,\n  SUM(CASE WHEN outcome = 'VALID' THEN count ELSE 0 END) as successful\nFROM key_verifications_per_day_v1\nWHERE time >= now() - INTERVAL 30 DAY\nGROUP BY key_id\nORDER BY total_verifications DESC\nLIMIT 100`,
  },
  {
    source: `${QE} Usage for a specific key`,
    sql: `SELECT\n  SUM(count) as total_verifications,\n  SUM(CASE WHEN outcome = 'VALID' THEN count ELSE 0 END) as successful,\n  SUM(CASE WHEN outcome = 'RATE_LIMITED' THEN count ELSE 0 END) as rate_limited\nFROM key_verifications_per_day_v1\nWHERE key_id = 'key_1234'\n  AND time >= now() - INTERVAL 30 DAY`,
  },
  {
    source: `${QE} Keys with most errors`,
    sql: `SELECT\n  key_id,\n  SUM(count) as total_errors,\n  groupArray(DISTINCT outcome) as error_types\nFROM key_verifications_per_day_v1\nWHERE outcome != 'VALID'\n  AND time >= now() - INTERVAL 7 DAY\nGROUP BY key_id\nORDER BY total_errors DESC\nLIMIT 20`,
  },
  { source: `${QE} Filter by single tag`, sql: `SELECT SUM(count) as total\nFROM key_verifications_per_day_v1\nWHERE has(tags, 'path=/api/v1/users')\n  AND time >= now() - INTERVAL 7 DAY` },
  { source: `${QE} Filter by multiple tags (OR)`, sql: `SELECT SUM(count) as total\nFROM key_verifications_per_day_v1\nWHERE hasAny(tags, ['path=/api/v1/users', 'path=/api/v1/posts'])\n  AND time >= now() - INTERVAL 7 DAY` },
  { source: `${QE} Filter by multiple tags (AND)`, sql: `SELECT SUM(count) as total\nFROM key_verifications_per_day_v1\nWHERE hasAll(tags, ['environment=production', 'team=backend'])\n  AND time >= now() - INTERVAL 7 DAY` },
  { source: `${QE} Group by tag`, sql: `SELECT\n  arrayJoin(tags) as tag,\n  SUM(count) as verifications\nFROM key_verifications_per_day_v1\nWHERE time >= now() - INTERVAL 7 DAY\nGROUP BY tag\nORDER BY verifications DESC\nLIMIT 20` },
  {
    source: `${QE} Breakdown by endpoint (using path tag)`,
    sql: `SELECT\n  arrayJoin(arrayFilter(x -> startsWith(x, 'path='), tags)) as endpoint,\n  COUNT(*) as requests\nFROM key_verifications_v1\nWHERE time >= now() - INTERVAL 24 HOUR\nGROUP BY endpoint\nORDER BY requests DESC`,
  },
  { source: `${QE} Monthly credits per user`, sql: `SELECT\n  external_id,\n  toStartOfMonth(time) as month,\n  SUM(spent_credits) as total_credits\nFROM key_verifications_per_day_v1\nWHERE external_id != ''\n  AND time >= toStartOfMonth(now())\nGROUP BY external_id, month\nORDER BY total_credits DESC` },
  {
    source: `${QE} Current billing period credits`,
    sql: `SELECT\n  external_id,\n  SUM(spent_credits) as credits_this_period\nFROM key_verifications_per_day_v1\nWHERE external_id = 'user_123'\n  AND time >= 1704067200000  -- Start of billing period (Unix millis)\n  AND time < 1706745600000   -- End of billing period (Unix millis)\nGROUP BY external_id`,
  },
  {
    source: `${QE} Credit-based tier calculation`,
    sql: `SELECT\n  external_id,\n  SUM(spent_credits) as total_credits,\n  CASE\n    WHEN total_credits <= 1000 THEN 'free'\n    WHEN total_credits <= 10000 THEN 'starter'\n    WHEN total_credits <= 100000 THEN 'pro'\n    ELSE 'enterprise'\n  END as tier\nFROM key_verifications_per_day_v1\nWHERE time >= toStartOfMonth(now())\n  AND external_id = 'user_123'\nGROUP BY external_id`,
  },
  {
    source: `${QE} Daily credit usage and cost`,
    sql: `SELECT\n  time as date,\n  SUM(spent_credits) as credits_used,\n  credits_used * 0.001 as estimated_cost  -- $0.001 per credit\nFROM key_verifications_per_day_v1\nWHERE external_id = 'user_123'\n  AND time >= now() - INTERVAL 30 DAY\nGROUP BY date\nORDER BY date`,
  },
  {
    source: `${QE} Moving average (7-day)`,
    sql: `SELECT\n  date,\n  verifications,\n  avg(verifications) OVER (\n    ORDER BY date\n    ROWS BETWEEN 6 PRECEDING AND CURRENT ROW\n  ) as moving_avg_7d\nFROM (\n  SELECT\n    time as date,\n    SUM(count) as verifications\n  FROM key_verifications_per_day_v1\n  WHERE time >= now() - INTERVAL 60 DAY\n  GROUP BY date\n)\nORDER BY date`,
  },
  { source: `${QE} Hourly aggregates`, sql: `SELECT\n  time,\n  SUM(count) as total\nFROM key_verifications_per_hour_v1\nWHERE time >= toStartOfHour(now() - INTERVAL 7 DAY)\nGROUP BY time\nORDER BY time` },
  { source: `${QE} Daily aggregates`, sql: `SELECT\n  time,\n  SUM(count) as total\nFROM key_verifications_per_day_v1\nWHERE time >= toStartOfDay(now() - INTERVAL 30 DAY)\nGROUP BY time\nORDER BY time` },
  { source: `${QE} Monthly aggregates`, sql: `SELECT\n  time,\n  SUM(count) as total\nFROM key_verifications_per_month_v1\nWHERE time >= toStartOfMonth(now() - INTERVAL 12 MONTH)\nGROUP BY time\nORDER BY time` },
  {
    source: `${QE} Hourly data with gaps filled`,
    filled: true,
    sql: `SELECT\n  time,\n  SUM(count) as total\nFROM key_verifications_per_hour_v1\nWHERE time >= toStartOfHour(now() - INTERVAL 7 DAY)\n  AND time <= toStartOfHour(now())\nGROUP BY time\nORDER BY time ASC\n  WITH FILL\n  FROM toStartOfHour(now() - INTERVAL 7 DAY)\n  TO toStartOfHour(now())\n  STEP INTERVAL 1 HOUR`,
  },
  {
    source: `${QE} Daily data with gaps filled`,
    filled: true,
    sql: `SELECT\n  time,\n  SUM(count) as total\nFROM key_verifications_per_day_v1\nWHERE time >= toDate(now() - INTERVAL 30 DAY)\n  AND time <= toDate(now())\nGROUP BY time\nORDER BY time ASC\n  WITH FILL\n  FROM toDate(now() - INTERVAL 30 DAY)\n  TO toDate(now())\n  STEP INTERVAL 1 DAY`,
  },
  {
    source: `${QE} Monthly data with gaps filled`,
    filled: true,
    sql: `SELECT\n  time,\n  SUM(count) as total\nFROM key_verifications_per_month_v1\nWHERE time >= toDate(toStartOfMonth(now() - INTERVAL 12 MONTH))\n  AND time <= toDate(toStartOfMonth(now()))\nGROUP BY time\nORDER BY time ASC\n  WITH FILL\n  FROM toDate(toStartOfMonth(now() - INTERVAL 12 MONTH))\n  TO toDate(toStartOfMonth(now()))\n  STEP INTERVAL 1 MONTH`,
  },
  {
    source: `${QE} Filling gaps with aggregations`,
    filled: true,
    sql: `-- Pivot outcomes into columns with all days filled\nSELECT\n  time,\n  sumIf(count, outcome = 'VALID') as valid,\n  sumIf(count, outcome = 'RATE_LIMITED') as rate_limited,\n  sumIf(count, outcome = 'INVALID') as invalid,\n  SUM(count) as total\nFROM key_verifications_per_day_v1\nWHERE time >= toDate(now() - INTERVAL 30 DAY)\n  AND time <= toDate(now())\nGROUP BY time\nORDER BY time ASC\n  WITH FILL\n  FROM toDate(now() - INTERVAL 30 DAY)\n  TO toDate(now())\n  STEP INTERVAL 1 DAY`,
  },

  { source: `${QR} Total verifications (last 7 days)`, sql: `SELECT SUM(count) as total\nFROM key_verifications_per_day_v1\nWHERE time >= now() - INTERVAL 7 DAY` },
  { source: `${QR} Verifications by outcome (last 30 days)`, sql: `SELECT outcome, SUM(count) as count\nFROM key_verifications_per_day_v1\nWHERE time >= now() - INTERVAL 30 DAY\nGROUP BY outcome\nORDER BY count DESC` },
  { source: `${QR} Daily usage trend (last 30 days)`, sql: `SELECT time as date, SUM(count) as verifications\nFROM key_verifications_per_day_v1\nWHERE time >= now() - INTERVAL 30 DAY\nGROUP BY date\nORDER BY date` },
  { source: `${QR} Top users by usage (last 30 days)`, sql: `SELECT external_id, SUM(count) as total_verifications\nFROM key_verifications_per_day_v1\nWHERE time >= now() - INTERVAL 30 DAY\n  AND external_id != ''\nGROUP BY external_id\nORDER BY total_verifications DESC\nLIMIT 10` },
  { source: `${QR} Specific user activity (last 30 days)`, sql: `SELECT SUM(count) as total_verifications,\n       SUM(CASE WHEN outcome = 'VALID' THEN count ELSE 0 END) as successful\nFROM key_verifications_per_day_v1\nWHERE external_id = 'user_123'\n  AND time >= now() - INTERVAL 30 DAY` },
  { source: `${QR} Usage per API (last 30 days)`, sql: `SELECT key_space_id, SUM(count) as total_verifications\nFROM key_verifications_per_day_v1\nWHERE time >= now() - INTERVAL 30 DAY\nGROUP BY key_space_id\nORDER BY total_verifications DESC` },
  {
    source: `${QR} API success rate comparison (last 7 days)`,
    sql: `SELECT key_space_id,\n       SUM(count) as verifications,\n       round(SUM(CASE WHEN outcome = 'VALID' THEN count ELSE 0 END) / SUM(count) * 100, 2) as success_rate\nFROM key_verifications_per_day_v1\nWHERE key_space_id IN ('ks_1234', 'ks_5678')\n  AND time >= now() - INTERVAL 7 DAY\nGROUP BY key_space_id`,
  },
  { source: `${QR} Monthly credits per user`, sql: `SELECT external_id,\n       toStartOfMonth(time) as month,\n       SUM(spent_credits) as total_credits\nFROM key_verifications_per_day_v1\nWHERE external_id != ''\n  AND time >= toStartOfMonth(now())\nGROUP BY external_id, month\nORDER BY total_credits DESC` },
  {
    source: `${QR} User tier calculation (current month)`,
    sql: `SELECT external_id, SUM(spent_credits) as total_credits,\n       CASE\n         WHEN total_credits <= 1000 THEN 'free'\n         WHEN total_credits <= 10000 THEN 'starter'\n         WHEN total_credits <= 100000 THEN 'pro'\n         ELSE 'enterprise'\n       END as tier\nFROM key_verifications_per_day_v1\nWHERE time >= toStartOfMonth(now())\n  AND external_id = 'user_123'\nGROUP BY external_id`,
  },
  { source: `${QR} Filter by single tag`, sql: `SELECT SUM(count) as total\nFROM key_verifications_per_day_v1\nWHERE has(tags, 'path=/api/v1/users')\n  AND time >= now() - INTERVAL 7 DAY` },
  { source: `${QR} Filter by multiple tags (OR)`, sql: `SELECT SUM(count) as total\nFROM key_verifications_per_day_v1\nWHERE hasAny(tags, ['path=/api/v1/users', 'path=/api/v1/posts'])\n  AND time >= now() - INTERVAL 7 DAY` },
  { source: `${QR} Group by endpoint (using path tags)`, sql: `SELECT arrayJoin(arrayFilter(x -> startsWith(x, 'path='), tags)) as endpoint,\n       COUNT(*) as requests\nFROM key_verifications_v1\nWHERE time >= now() - INTERVAL 24 HOUR\nGROUP BY endpoint\nORDER BY requests DESC` },
  {
    source: `${QR} Daily data with all days included`,
    filled: true,
    sql: `SELECT time, SUM(count) as total\nFROM key_verifications_per_day_v1\nWHERE time >= toDate(now() - INTERVAL 30 DAY)\n  AND time <= toDate(now())\nGROUP BY time\nORDER BY time ASC\n  WITH FILL\n  FROM toDate(now() - INTERVAL 30 DAY)\n  TO toDate(now())\n  STEP INTERVAL 1 DAY`,
  },
  ...[
    'WHERE time >= now() - INTERVAL 7 DAY    -- Last 7 days',
    'WHERE time >= now() - INTERVAL 24 HOUR   -- Last 24 hours',
    'WHERE time >= toStartOfDay(now())         -- Today',
    'WHERE time >= toStartOfMonth(now())       -- This month',
    "WHERE external_id = 'user_123'",
    "WHERE external_id IN ('user_123', 'user_456')",
    "WHERE key_space_id = 'ks_1234'",
    "WHERE key_space_id IN ('ks_1234', 'ks_5678')",
    "WHERE has(tags, 'environment=production')",
    "WHERE hasAny(tags, ['team=backend', 'team=frontend'])",
    "WHERE hasAll(tags, ['environment=prod', 'tier=premium'])",
    "WHERE outcome = 'VALID'",
    "WHERE outcome != 'VALID'",
    "WHERE outcome IN ('RATE_LIMITED', 'USAGE_EXCEEDED')",
  ].map((fragment) => ({ source: `${QR} Common Filters: ${fragment}`, sql: where('key_verifications_per_day_v1', fragment) })),

  { source: `${SR} Filter by keyspace`, sql: `SELECT COUNT(*) FROM key_verifications_v1\nWHERE key_space_id = 'ks_1234'` },
  { source: `${SR} Filter by User`, sql: `SELECT COUNT(*) FROM key_verifications_v1\nWHERE external_id = 'user_abc123'` },
  { source: `${SR} Multiple Values`, sql: `SELECT COUNT(*) FROM key_verifications_v1\nWHERE key_space_id IN ('ks_1234', 'ks_5678')\n  AND external_id IN ('user_abc', 'user_xyz')` },
  {
    source: `${SR} Filter gateway verifications by app`,
    needs: { table: 'key_verifications_per_day_v1', columns: ['source', 'app_id'] },
    sql: `SELECT\n  app_id,\n  SUM(count) AS verifications\nFROM key_verifications_per_day_v1\nWHERE source = 'gateway'\n  AND app_id != ''\n  AND time >= now() - INTERVAL 30 DAY\nGROUP BY app_id\nORDER BY verifications DESC`,
  },
  { source: `${SR} Check if tag exists`, sql: `SELECT COUNT(*) FROM key_verifications_v1\nWHERE has(tags, 'path=/api/users')` },
  { source: `${SR} Check if any tag exists`, sql: `SELECT COUNT(*) FROM key_verifications_v1\nWHERE hasAny(tags, ['environment=prod', 'environment=staging'])` },
  { source: `${SR} Check if all tags exist`, sql: `SELECT COUNT(*) FROM key_verifications_v1\nWHERE hasAll(tags, ['environment=production', 'team=backend'])` },
  { source: `${SR} Extract and group by tags`, sql: `SELECT\n  arrayJoin(tags) as tag,\n  COUNT(*) as count\nFROM key_verifications_v1\nWHERE time >= now() - INTERVAL 24 HOUR\nGROUP BY tag\nORDER BY count DESC` },
  { source: `${SR} Filter tags with pattern`, sql: `-- Get all tags starting with "path="\nSELECT\n  arrayJoin(arrayFilter(x -> startsWith(x, 'path='), tags)) as path,\n  COUNT(*) as requests\nFROM key_verifications_v1\nWHERE time >= now() - INTERVAL 24 HOUR\nGROUP BY path` },
  { source: `${SR} Current Time`, sql: 'SELECT now() as current_datetime' },
  { source: `${SR} Current Time (millis)`, sql: 'SELECT toUnixTimestamp(now()) * 1000 as current_millis' },
  ...[
    'WHERE time >= toUnixTimestamp(now() - INTERVAL 1 HOUR) * 1000',
    'WHERE time >= toUnixTimestamp(now() - INTERVAL 24 HOUR) * 1000',
    'WHERE time >= toUnixTimestamp(now() - INTERVAL 7 DAY) * 1000',
    'WHERE time >= toUnixTimestamp(now() - INTERVAL 30 DAY) * 1000',
    'WHERE time >= toUnixTimestamp(toStartOfMonth(now())) * 1000',
    'WHERE time >= toUnixTimestamp(toStartOfDay(now())) * 1000',
    'WHERE time >= 1704067200000  -- Jan 1, 2024 00:00:00 UTC\n  AND time < 1735689600000   -- Jan 1, 2025 00:00:00 UTC',
  ].map((fragment) => ({ source: `${SR} Time Ranges (Raw Table): ${fragment}`, sql: where('key_verifications_v1', fragment) })),
  ...['WHERE time >= now() - INTERVAL 7 DAY', 'WHERE time >= toStartOfMonth(now())', 'WHERE time >= toStartOfDay(now())'].map((fragment) => ({
    source: `${SR} Time Ranges (Aggregated Tables): ${fragment}`,
    sql: `SELECT SUM(count) AS n FROM key_verifications_per_hour_v1 ${fragment}`,
  })),
  ...[
    'SELECT toStartOfHour(toDateTime(time / 1000)) as hour',
    'SELECT toStartOfDay(toDateTime(time / 1000)) as day',
    'SELECT toStartOfMonth(toDateTime(time / 1000)) as month',
    'SELECT toDate(toDateTime(time / 1000)) as date',
    'SELECT COUNT(*)',
    'SELECT AVG(spent_credits)',
    'SELECT MIN(time)',
    'SELECT MAX(time)',
    "SELECT countIf(outcome = 'VALID')",
    'SELECT uniq(key_id)',
    "SELECT concat(region, '-', outcome)",
    'SELECT substring(key_id, 1, 8)',
    'SELECT arrayJoin(tags) as tag',
    "SELECT arrayFilter(x -> startsWith(x, 'path='), tags)",
    'SELECT round(AVG(spent_credits), 2)',
    'SELECT floor(spent_credits / 100) * 100 as credit_bucket',
    'SELECT ceil(spent_credits)',
    "SELECT if(outcome = 'VALID', 1, 0)",
    "SELECT CASE WHEN outcome = 'VALID' THEN 'success' ELSE 'failure' END",
  ].map((selectList) => ({ source: `${SR} function examples: ${selectList}`, sql: raw(selectList) })),
  ...["WHERE lower(outcome) = 'valid'", "WHERE upper(region) = 'US-EAST-1'", "WHERE startsWith(key_id, 'key_')", "WHERE has(tags, 'environment=production')", "WHERE hasAny(tags, ['team=backend', 'team=api'])", "WHERE hasAll(tags, ['environment=prod', 'tier=1'])", 'WHERE length(tags) > 0'].map((fragment) => ({
    source: `${SR} function examples: ${fragment}`,
    sql: where('key_verifications_v1', fragment),
  })),
  { source: `${SR} function examples: SUM(valid_count)`, failsAnyway: 'valid_count', sql: 'SELECT SUM(valid_count) FROM key_verifications_per_day_v1' },
  { source: `${SR} function examples: abs(difference)`, failsAnyway: 'difference', sql: raw('SELECT abs(difference)') },

  { source: `${GS} Count Total Verifications`, sql: `SELECT SUM(count) as total\nFROM key_verifications_per_day_v1\nWHERE time >= now() - INTERVAL 7 DAY` },
  { source: `${GS} Break Down by Outcome`, sql: `SELECT\n  outcome,\n  SUM(count) as count\nFROM key_verifications_per_hour_v1\nWHERE time >= now() - INTERVAL 24 HOUR\nGROUP BY outcome\nORDER BY count DESC` },
  { source: `${GS} Top Users by Usage`, sql: `SELECT\n  external_id,\n  SUM(count) as verifications\nFROM key_verifications_per_day_v1\nWHERE time >= now() - INTERVAL 30 DAY\nGROUP BY external_id\nORDER BY verifications DESC\nLIMIT 10` },

  { source: `${TS} Time Range Issues (shorter range)`, sql: where('key_verifications_v1', 'WHERE time >= now() - INTERVAL 1 HOUR') },
  { source: `${TS} Time Range Issues (latest)`, sql: 'SELECT MAX(time) as latest FROM key_verifications_v1' },
  { source: `${TS} Filter Problems (empty external_id)`, sql: where('key_verifications_v1', "WHERE external_id != ''") },
  { source: `${TS} Filter Problems (case sensitivity)`, sql: 'SELECT DISTINCT external_id FROM key_verifications_v1 LIMIT 10' },
  { source: `${TS} Data Availability`, sql: 'SELECT COUNT(*) FROM key_verifications_v1 WHERE time >= now() - INTERVAL 1 HOUR' },
  { source: `${TS} Use Aggregated Tables (slow)`, sql: 'SELECT COUNT(*) FROM key_verifications_v1 WHERE time >= now() - INTERVAL 7 DAY' },
  { source: `${TS} Use Aggregated Tables (fast)`, sql: 'SELECT SUM(count) FROM key_verifications_per_day_v1 WHERE time >= now() - INTERVAL 7 DAY' },
  { source: `${TS} Add Time Filters First`, sql: where('key_verifications_per_day_v1', "WHERE time >= now() - INTERVAL 7 DAY\n  AND external_id = 'user_123'  -- Additional filters after time") },
  { source: `${TS} Limit Result Size`, sql: `SELECT external_id, SUM(count) as usage\nFROM key_verifications_per_day_v1\nWHERE time >= now() - INTERVAL 30 DAY\nGROUP BY external_id\nORDER BY usage DESC\nLIMIT 100  -- Add LIMIT for large datasets` },
  { source: `${TS} Missing Property 'query'`, sql: 'SELECT COUNT(*) FROM key_verifications_v1' },
  { source: `${TS} Filter Before Grouping (less efficient)`, sql: `SELECT external_id, SUM(count) as usage\nFROM key_verifications_per_day_v1\nGROUP BY external_id\nHAVING SUM(count) > 1000` },
  { source: `${TS} Filter Before Grouping (more efficient)`, sql: `SELECT external_id, SUM(count) as usage\nFROM key_verifications_per_day_v1\nWHERE time >= now() - INTERVAL 30 DAY  -- Filter first\nGROUP BY external_id\nHAVING SUM(count) > 1000` },

  { source: `${ER}/invalid_analytics_function Correct - Safe analytics functions`, failsAnyway: 'response_time', sql: `SELECT\n  toStartOfHour(time) as hour,\n  COUNT(*) as total,\n  AVG(response_time) as avg_response\nFROM key_verifications_v1\nWHERE time >= now() - INTERVAL 7 DAY\nGROUP BY hour` },
  { source: `${ER}/invalid_analytics_function Safe Alternative`, failsAnyway: 'api_id', sql: `SELECT\n  api_id,\n  COUNT(*) as verifications\nFROM key_verifications_v1\nWHERE time >= now() - INTERVAL 1 DAY\nGROUP BY api_id` },
  { source: `${ER}/invalid_analytics_table Correct - Analytics table`, sql: 'SELECT * FROM key_verifications_v1\nWHERE time >= now() - INTERVAL 7 DAY' },
  { source: `${ER}/invalid_analytics_table Fix Typos (correct)`, sql: 'SELECT * FROM key_verifications_v1\nWHERE time >= now() - INTERVAL 1 DAY' },
  { source: `${ER}/invalid_analytics_query Missing comma (correct)`, failsAnyway: 'GROUP BY', sql: 'SELECT\n  key_space_id,\n  COUNT(*) as total\nFROM key_verifications_v1' },
  { source: `${ER}/invalid_analytics_query Unclosed quote (correct)`, sql: "SELECT key_space_id, outcome\nFROM key_verifications_v1\nWHERE key_space_id = 'ks_123'" },
  { source: `${ER}/invalid_analytics_query Typo in SELECT (correct)`, sql: 'SELECT time, outcome\nFROM key_verifications_v1' },
  { source: `${ER}/invalid_analytics_query Verify Column Names`, sql: '-- ✓ Valid columns\nSELECT time, key_space_id, outcome, key_id\nFROM key_verifications_v1\nWHERE time >= now() - INTERVAL 7 DAY' },
  { source: `${ER}/invalid_analytics_query_type SELECT queries only`, failsAnyway: 'api_id', sql: `SELECT\n  api_id,\n  outcome,\n  COUNT(*) as total\nFROM key_verifications_v1\nWHERE time >= now() - INTERVAL 7 DAY\nGROUP BY api_id, outcome` },
  { source: `${ER}/invalid_analytics_query_type Count verifications by outcome`, sql: '-- ✓ Count verifications by outcome\nSELECT outcome, COUNT(*) as total\nFROM key_verifications_v1\nWHERE time >= now() - INTERVAL 1 DAY\nGROUP BY outcome' },
  { source: `${ER}/invalid_analytics_query_type Get hourly verification rates`, sql: '-- ✓ Get hourly verification rates\nSELECT\n  toStartOfHour(time) as hour,\n  COUNT(*) as verifications\nFROM key_verifications_v1\nWHERE time >= now() - INTERVAL 24 HOUR\nGROUP BY hour\nORDER BY hour' },
  { source: `${ER}/invalid_analytics_query_type Find most active APIs`, failsAnyway: 'api_id', sql: '-- ✓ Find most active APIs\nSELECT\n  api_id,\n  COUNT(*) as requests\nFROM key_verifications_v1\nWHERE time >= now() - INTERVAL 7 DAY\nGROUP BY api_id\nORDER BY requests DESC\nLIMIT 10' },

  { source: `${GR} Send a query`, kind: 'ratelimits', sql: "SELECT identifier, passed, tokens FROM ratelimits_v1 WHERE namespace_id = 'rlns_1234' ORDER BY time DESC LIMIT 10" },
  { source: `${GR} Send a query (one namespace)`, kind: 'ratelimits', sql: "SELECT COUNT(*) AS n FROM ratelimits_v1 WHERE namespace_id = 'rlns_1234'" },
  { source: `${GR} Send a query (several namespaces)`, kind: 'ratelimits', sql: "SELECT COUNT(*) AS n FROM ratelimits_v1 AS r WHERE r.namespace_id IN ('rlns_1234', 'rlns_5678')" },
  {
    source: `${GR} Reference available columns (latency states)`,
    kind: 'ratelimits',
    sql: `SELECT\n  avgMerge(latency_avg) AS average_latency,\n  quantilesTDigestMerge(0.75)(latency_p75)[1] AS p75_latency,\n  quantilesTDigestMerge(0.99)(latency_p99)[1] AS p99_latency\nFROM ratelimits_per_hour_v1\nWHERE namespace_id = 'rlns_1234'\n  AND time >= now() - INTERVAL 24 HOUR`,
  },
  {
    source: `${GR} Build a zero-filled time series`,
    kind: 'ratelimits',
    filled: true,
    sql: `SELECT\n  time,\n  sum(passed) AS passed_requests,\n  sum(total) - sum(passed) AS blocked_requests,\n  sum(total) AS total_requests,\n  sum(passed_tokens) AS passed_tokens,\n  sum(total_tokens) - sum(passed_tokens) AS blocked_tokens,\n  sum(total_tokens) AS total_tokens\nFROM ratelimits_per_minute_v1\nWHERE namespace_id = 'rlns_1234'\n  AND time >= toStartOfMinute(now() - INTERVAL 6 HOUR)\n  AND time < toStartOfMinute(now())\nGROUP BY time\nORDER BY time WITH FILL\n  FROM toStartOfMinute(now() - INTERVAL 6 HOUR)\n  TO toStartOfMinute(now())\n  STEP INTERVAL 1 MINUTE`,
  },
  {
    source: `${GR} Combine multiple identifiers`,
    kind: 'ratelimits',
    needs: { table: 'ratelimits_per_day_v1', columns: ['passed_tokens', 'total_tokens'] },
    sql: `SELECT\n  time,\n  sum(passed) AS passed_requests,\n  sum(total) - sum(passed) AS blocked_requests,\n  sum(total) AS total_requests,\n  sum(passed_tokens) AS passed_tokens,\n  sum(total_tokens) - sum(passed_tokens) AS blocked_tokens,\n  sum(total_tokens) AS total_tokens\nFROM ratelimits_per_day_v1\nWHERE namespace_id = 'rlns_1234'\n  AND identifier IN ('customer_123', 'customer_456', 'customer_789')\n  AND time >= toStartOfDay(now() - INTERVAL 30 DAY)\nGROUP BY time\nORDER BY time ASC`,
  },
  {
    source: `${GR} Paginate an identifier breakdown`,
    kind: 'ratelimits',
    sql: `SELECT\n  identifier,\n  max(time) AS last_request_time,\n  countIf(passed) AS passed_requests,\n  countIf(not passed) AS blocked_requests,\n  count() AS total_requests,\n  sumIf(tokens, passed) AS passed_tokens,\n  sumIf(tokens, not passed) AS blocked_tokens,\n  sum(tokens) AS total_tokens\nFROM ratelimits_v1\nWHERE namespace_id = 'rlns_1234'\n  AND time >= toUnixTimestamp64Milli(now64(3) - INTERVAL 7 DAY)\nGROUP BY identifier\nORDER BY total_requests DESC, identifier ASC\nLIMIT 50 OFFSET 0`,
  },
];

describe('ORDER BY … WITH FILL (fill.ts)', () => {
  const dayOf = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

  it('fills every day from FROM up to TO (exclusive) with zeros, keeps the rows it has, in order', async () => {
    const filled = await filledRows('SELECT time, SUM(count) AS total, any_value(outcome) AS some_outcome FROM key_verifications_per_day_v1 WHERE time >= toDate(now() - INTERVAL 30 DAY) AND time <= toDate(now()) GROUP BY time ORDER BY time ASC WITH FILL FROM toDate(now() - INTERVAL 30 DAY) TO toDate(now()) STEP INTERVAL 1 DAY');
    const plain = await rows('SELECT time, SUM(count) AS total FROM key_verifications_per_day_v1 WHERE time >= toDate(now() - INTERVAL 30 DAY) AND time <= toDate(now()) GROUP BY time');
    const today = dayOf(Date.now());
    const days = filled.map((r) => String(r.time));
    expect(days).toEqual([...days].sort());
    expect(new Set(days).size).toBe(days.length);
    // The 30 days before today, each once, then today's row when it has one (TO is exclusive; a row past it stays).
    expect(days.slice(0, 30)).toEqual(Array.from({ length: 30 }, (_, i) => dayOf(Date.now() - (30 - i) * DAY)));
    expect(days.slice(30)).toEqual(plain.some((r) => String(r.time) === today) ? [today] : []);
    for (const r of filled) {
      const real = plain.find((p) => String(p.time) === String(r.time));
      expect(r.total).toBe(real === undefined ? '0' : real.total);
      if (real === undefined) expect(r.some_outcome).toBe('');
    }
    expect(plain.length).toBeGreaterThan(0);
  });

  it('without FROM and TO fills between the least and greatest value; a number STEP on a DateTime is seconds; DESC orders down', async () => {
    const filled = await filledRows('SELECT toStartOfHour(toDateTime(time / 1000)) AS hour, count() AS n FROM key_verifications_v1 WHERE time >= now() - INTERVAL 1 DAY GROUP BY hour ORDER BY hour DESC WITH FILL STEP 3600');
    const plain = await rows('SELECT toStartOfHour(toDateTime(time / 1000)) AS hour, count() AS n FROM key_verifications_v1 WHERE time >= now() - INTERVAL 1 DAY GROUP BY hour ORDER BY hour');
    const first = Date.parse(`${String(plain[0]?.hour)}Z`);
    const last = Date.parse(`${String(plain.at(-1)?.hour)}Z`);
    expect(filled).toHaveLength((last - first) / HOUR + 1);
    expect(filled.map((r) => Date.parse(`${String(r.hour)}Z`))).toEqual(Array.from({ length: filled.length }, (_, i) => last - i * HOUR));
    expect(filled.reduce((sum, r) => sum + Number(r.n), 0)).toBe(plain.reduce((sum, r) => sum + Number(r.n), 0));
  });

  it('refuses what it does not take: an expression, STALENESS, a text column, an interval on a number, a fill of more rows than a query may return', async () => {
    const refusedWith = async (query: string, maxRows = 10_000): Promise<ApiError> => {
      try {
        await filledRows(query, VERIFY, maxRows);
      } catch (err) {
        if (err instanceof ApiError) return err;
        throw err;
      }
      throw new Error(`filled instead of refused: ${query}`);
    };
    const base = 'SELECT time, SUM(count) AS total FROM key_verifications_per_day_v1 GROUP BY time';
    expect((await refusedWith(`${base} ORDER BY toDate(time) WITH FILL`)).errorName).toBe('invalid_analytics_query');
    expect((await refusedWith(`${base} ORDER BY time WITH FILL STALENESS 1`)).detail).toContain('STALENESS');
    expect((await refusedWith('SELECT outcome, count() AS n FROM key_verifications_v1 GROUP BY outcome ORDER BY outcome WITH FILL')).detail).toContain('only a DateTime, a Date or a number');
    expect((await refusedWith('SELECT time, count() AS n FROM key_verifications_v1 GROUP BY time ORDER BY time WITH FILL STEP INTERVAL 1 DAY')).detail).toContain('is a number');
    expect((await refusedWith(`${base} ORDER BY time WITH FILL FROM toDate(now() - INTERVAL 3 YEAR) TO toDate(now()) STEP 1`, 1000)).errorName).toBe('query_rows_limit_exceeded');
    expect((await refusedWith(`${base} ORDER BY time WITH FILL STEP 0`)).detail).toContain('STEP');
  });

  it('a query with WITH FILL only inside a subquery is refused as before, naming it', async () => {
    expect(splitFill('SELECT * FROM (SELECT time FROM key_verifications_per_day_v1 ORDER BY time WITH FILL) AS t')).toBeUndefined();
    const err = await refusal('SELECT * FROM (SELECT time FROM key_verifications_per_day_v1 ORDER BY time WITH FILL) AS t');
    expect(err.detail).toContain('WITH FILL');
  });

  it("reads the clause only outside strings and comments", () => {
    expect(splitFill("SELECT 'ORDER BY x WITH FILL' AS t")).toBeUndefined();
    expect(splitFill('SELECT time FROM key_verifications_per_day_v1 -- ORDER BY time WITH FILL\n')).toBeUndefined();
    expect(splitFill('SELECT time AS "a b" FROM key_verifications_per_day_v1 ORDER BY "a b" WITH FILL STEP 1 LIMIT 5')).toEqual({
      query: 'SELECT time AS "a b" FROM key_verifications_per_day_v1 ORDER BY "a b"  LIMIT 5',
      fill: { column: 'a b', descending: false, from: undefined, to: undefined, step: '1' },
    });
  });
});

describe("Unkey's documented queries", () => {
  it.each(DOCUMENTED.map((d) => [d.source, d] as const))('%s', async (_, doc) => {
    const scope = doc.kind === 'ratelimits' ? RATELIMIT : VERIFY;
    if (doc.refused !== undefined) {
      const err = await refusal(doc.sql, scope);
      expect(err.errorName).toBe('invalid_analytics_query');
      expect(err.detail).toContain(doc.refused);
      expect(err.detail).toContain('ClickHouse');
      return;
    }
    if (doc.filled === true) {
      const filled = await filledRows(doc.sql, scope);
      expect(filled.length).toBeGreaterThan(1);
      return;
    }
    const sql = await translate(doc.sql, scope, parser);
    const missing = doc.needs === undefined ? [] : doc.needs.columns.filter((c) => !columnsCache.get(doc.needs?.table ?? '')?.includes(c));
    const broken = doc.failsAnyway ?? missing[0];
    if (broken !== undefined) await expect(con.runAndReadAll(sql)).rejects.toThrow(broken);
    else await con.runAndReadAll(sql);
  });
});

const columnsCache = new Map<string, string[]>();
beforeAll(async () => {
  for (const d of DOCUMENTED) if (d.needs !== undefined) columnsCache.set(d.needs.table, await publicColumns(d.needs.table));
});

describe('answers on the seeded events', () => {
  it('quantiles as ClickHouse writes them, f(levels)(x), on raw rows; strings and comments that look like one are left alone', async () => {
    const q = `SELECT quantile(0.5)(spent_credits) AS med, quantiles(0.25, 0.75)(spent_credits) AS qs, quantileExact(0.9)(spent_credits) AS p90, quantile(spent_credits) AS plain,
      'quantile(0.5)(x)' AS s /* quantile(1)(y) */ FROM key_verifications_v1 WHERE workspace_id = 'ws_a'`;
    // ws_a's spent credits: 0, 0, 2, 3, 5, 50.
    expect(await rows(q)).toEqual([{ med: 2.5, qs: [0.5, 4.5], p90: '50', plain: 2.5, s: 'quantile(0.5)(x)' }]);
    // A level outside [0, 1]: DuckDB refuses it when the query runs (the worker answers 400).
    await expect(con.runAndReadAll(await translate('SELECT quantile(1.5)(spent_credits) FROM key_verifications_v1', VERIFY, parser))).rejects.toThrow(/QUANTILE/i);
  });

  it("the rate-limit rollups' latency states: avgMerge(latency_avg) and quantilesTDigestMerge(levels)(latency_p75 / _p99)", async () => {
    const q = (table: string): string => `SELECT namespace_id, avgMerge(latency_avg) AS average_latency, quantilesTDigestMerge(0.75)(latency_p75)[1] AS p75, quantileTDigestMerge(0.99)(latency_p99) AS p99
      FROM ${table} GROUP BY namespace_id ORDER BY namespace_id`;
    for (const g of GRAINS) {
      expect(await rows(q(`ratelimits_per_${g}_v1`), RATELIMIT), g).toEqual([
        { namespace_id: 'rlns_1234', average_latency: 1.5, p75: 1.5, p99: 1.5 },
        { namespace_id: 'rlns_5678', average_latency: 1.5, p75: 1.5, p99: 1.5 },
      ]);
    }
  });

  it('counts within the workspace, and within the key spaces of a scoped key', async () => {
    const q = 'SELECT COUNT(*) as total FROM key_verifications_v1 WHERE time >= now() - INTERVAL 7 DAY';
    expect(await rows(q)).toEqual([{ total: '5' }]);
    expect(await rows(q, { ...VERIFY, ids: ['ks_1', 'ks_2'] })).toEqual([{ total: '4' }]);
    expect(await rows(q, { ...VERIFY, ids: [] })).toEqual([{ total: '0' }]);
  });

  it('sumIf answers 0, not NULL, for an outcome that never happened; countIf too', async () => {
    const [row] = await rows(`SELECT sumIf(count, outcome = 'VALID') AS valid, sumIf(count, outcome = 'RATE_LIMITED') AS rateLimited, sumIf(count, outcome = 'INVALID') AS invalid,
      sumIf(count, outcome = 'USAGE_EXCEEDED') AS usageExceeded, countIf(outcome = 'EXPIRED') AS expired, SUM(count) AS total FROM key_verifications_per_day_v1 WHERE time >= now() - INTERVAL 30 DAY`);
    expect(row).toEqual({ valid: '3', rateLimited: '1', invalid: '0', usageExceeded: '1', expired: '0', total: '5' });
    expect(await rows("SELECT sum(count) AS s, count() AS c, uniq(key_id) AS u FROM key_verifications_per_day_v1 WHERE outcome = 'NOPE'")).toEqual([{ s: '0', c: '0', u: '0' }]);
  });

  it('ranks users, without those of other workspaces', async () => {
    const top = await rows("SELECT external_id, SUM(count) as total_verifications FROM key_verifications_per_day_v1 WHERE time >= now() - INTERVAL 30 DAY AND external_id != '' GROUP BY external_id ORDER BY total_verifications DESC LIMIT 10");
    expect(top).toEqual([
      { external_id: 'user_123', total_verifications: '3' },
      { external_id: 'user_456', total_verifications: '1' },
    ]);
  });

  it('breaks down by path tag with arrayJoin(arrayFilter(…)); an empty array yields no row', async () => {
    const endpoints = await rows(
      "SELECT arrayJoin(arrayFilter(x -> startsWith(x, 'path='), tags)) as endpoint, COUNT(*) as requests FROM key_verifications_v1 WHERE time >= now() - INTERVAL 24 HOUR GROUP BY endpoint ORDER BY requests DESC",
    );
    expect(endpoints).toEqual([
      { endpoint: 'path=/api/v1/users', requests: '3' },
      { endpoint: 'path=/api/v1/posts', requests: '1' },
    ]);
    expect(await rows("SELECT arrayJoin(tags) AS tag, count(*) AS n FROM key_verifications_v1 WHERE key_id = 'key_3' GROUP BY tag")).toEqual([]);
    // The same array twice is one join; two arrays multiply.
    expect(await rows("SELECT arrayJoin(tags) AS a, arrayJoin(tags) AS b FROM key_verifications_v1 WHERE request_id = 'r3' ORDER BY a")).toHaveLength(3);
    expect(await rows("SELECT arrayJoin(tags) AS a, arrayJoin(['x', 'y']) AS b FROM key_verifications_v1 WHERE request_id = 'r3'")).toHaveLength(6);
  });

  it('reads the raw `time` as milliseconds wherever it meets a DateTime', async () => {
    expect(await rows('SELECT count(*) AS n FROM key_verifications_v1 WHERE time >= now() - INTERVAL 1 HOUR')).toEqual([{ n: '3' }]);
    expect(await rows('SELECT count(*) AS n FROM key_verifications_v1 WHERE time BETWEEN now() - INTERVAL 1 HOUR AND now()')).toEqual([{ n: '3' }]);
    expect(await rows('SELECT count(*) AS n FROM key_verifications_v1 WHERE toStartOfHour(time) >= toStartOfHour(now() - INTERVAL 3 HOUR)')).toEqual([{ n: '4' }]);
    expect(await rows("SELECT count(*) AS n FROM key_verifications_v1 WHERE time >= DATE '2000-01-01'")).toEqual([{ n: '6' }]);
    expect(await rows('SELECT count(*) AS n FROM key_verifications_v1 WHERE toDateTime(time / 1000) >= now() - INTERVAL 1 HOUR')).toEqual([{ n: '3' }]);
    // DateTime ± n is n seconds, Date ± n n days, as in ClickHouse.
    expect(await rows('SELECT count(*) AS n FROM key_verifications_v1 WHERE time >= now() - 3600')).toEqual([{ n: '3' }]);
    expect(await rows("SELECT toDateTime('2024-01-01 00:00:00') - 90 AS a, 60 + toDateTime('2024-01-01 00:00:00') AS b, toDate('2024-03-01') - 1 AS c")).toEqual([{ a: '2023-12-31 23:58:30', b: '2024-01-01 00:01:00', c: '2024-02-29' }]);
    // A literal of seconds is an INTEGER in DuckDB: widened before it becomes microseconds.
    expect(await rows('SELECT toDateTime(1700000000) AS a, fromUnixTimestamp(1700000000) AS b, toDateTime64(1700000000.5, 3) AS c')).toEqual([{ a: '2023-11-14 22:13:20', b: '2023-11-14 22:13:20', c: '2023-11-14 22:13:20.5' }]);
    // A number compared with a rollup's DateTime / Date is milliseconds too.
    const since = Date.now() - 50 * DAY;
    expect(await rows(`SELECT SUM(count) AS n FROM key_verifications_per_minute_v1 WHERE time >= ${since}`)).toEqual([{ n: '6' }]);
    expect(await rows(`SELECT SUM(count) AS n FROM key_verifications_per_day_v1 WHERE time >= ${since}`)).toEqual([{ n: '6' }]);
    // Through a CTE and with a qualified name.
    expect(await rows('WITH recent AS (SELECT time, key_id FROM key_verifications_v1) SELECT count(*) AS n FROM recent AS r WHERE r.time >= now() - INTERVAL 1 HOUR')).toEqual([{ n: '3' }]);
  });

  it('answers the rate-limit pagination example', async () => {
    const [row] = await rows(
      "SELECT identifier, countIf(passed) AS passed_requests, countIf(not passed) AS blocked_requests, count() AS total_requests, sumIf(tokens, passed) AS passed_tokens, sumIf(tokens, not passed) AS blocked_tokens, sum(tokens) AS total_tokens FROM ratelimits_v1 WHERE namespace_id = 'rlns_1234' AND time >= toUnixTimestamp64Milli(now64(3) - INTERVAL 7 DAY) GROUP BY identifier",
      RATELIMIT,
    );
    expect(row).toEqual({ identifier: 'customer_123', passed_requests: '1', blocked_requests: '1', total_requests: '2', passed_tokens: '1', blocked_tokens: '2', total_tokens: '3' });
    expect(await rows('SELECT namespace_id, sum(total) AS t FROM ratelimits_per_hour_v1 GROUP BY namespace_id ORDER BY namespace_id', { ...RATELIMIT, ids: ['rlns_5678'] })).toEqual([{ namespace_id: 'rlns_5678', t: '1' }]);
  });

  it('computes the 7-day moving average over the daily rollup', async () => {
    const result = await rows(
      'SELECT date, verifications, avg(verifications) OVER (ORDER BY date ROWS BETWEEN 6 PRECEDING AND CURRENT ROW) as moving_avg_7d FROM (SELECT time as date, SUM(count) as verifications FROM key_verifications_per_day_v1 GROUP BY date) ORDER BY date',
    );
    expect(result.reduce((n, r) => n + Number(r.verifications), 0)).toBe(6);
    expect(Number(result.at(-1)?.moving_avg_7d)).toBeGreaterThan(0);
  });
});

describe('ClickHouse functions', () => {
  const one = async (expression: string): Promise<unknown> => Object.values((await rows(`SELECT ${expression} AS v`))[0] ?? {})[0];

  it.each([
    ["toStartOfWeek(toDate('2024-01-03'))", '2023-12-31'],
    ["toStartOfWeek(toDate('2024-01-03'), 1)", '2024-01-01'],
    ["toMonday(toDate('2024-01-07'))", '2024-01-01'],
    ["toStartOfMonth(toDateTime('2024-02-29 13:14:15'))", '2024-02-01'],
    ["toStartOfQuarter(toDate('2024-05-20'))", '2024-04-01'],
    ["toStartOfYear(toDate('2024-05-20'))", '2024-01-01'],
    ["toStartOfHour(toDateTime('2024-02-29 13:14:15'))", '2024-02-29 13:00:00'],
    ["toStartOfFiveMinutes(toDateTime('2024-02-29 13:14:15'))", '2024-02-29 13:10:00'],
    ["toStartOfInterval(toDateTime('2024-02-29 13:14:15'), INTERVAL 15 MINUTE)", '2024-02-29 13:00:00'],
    ["toStartOfInterval(toDateTime('2024-02-29 13:14:15'), INTERVAL 2 HOUR)", '2024-02-29 12:00:00'],
    ["toStartOfInterval(toDateTime('2024-02-29 13:14:15'), toIntervalDay(1))", '2024-02-29 00:00:00'],
    ["toStartOfInterval(toDate('2024-01-07'), INTERVAL 1 WEEK)", '2024-01-01 00:00:00'],
    ["toStartOfInterval(toDate('2024-05-20'), INTERVAL 3 MONTH)", '2024-04-01 00:00:00'],
    ["toStartOfInterval(toDate('2024-05-20'), INTERVAL 1 YEAR)", '2024-01-01 00:00:00'],
    ['toStartOfInterval(1704067265123, INTERVAL 1 MINUTE)', '2024-01-01 00:01:00'],
    ['toStartOfMinute(1704067265123)', '2024-01-01 00:01:00'],
    ['toDateTime(1704067200.9)', '2024-01-01 00:00:00'],
    ['fromUnixTimestamp64Milli(1704067200123)', '2024-01-01 00:00:00.123'],
    ["toUnixTimestamp(toDateTime('2024-01-01 00:00:00'))", '1704067200'],
    ["toUnixTimestamp64Milli(toDateTime64('2024-01-01 00:00:00.5', 3))", '1704067200500'],
    ["formatDateTime(toDateTime('2024-01-02 03:04:05'), '%Y-%m-%d')", '2024-01-02'],
    ["toDateTime('2024-01-01 00:00:00') + INTERVAL 90 MINUTE", '2024-01-01 01:30:00'],
    ["toDateTime('2024-01-01 00:00:00') + toIntervalDay(2)", '2024-01-03 00:00:00'],
    ['toInt64(2.7)', '2'],
    ['toInt64(-2.7)', '-2'],
    ['toInt8(300)', 44],
    ['toInt8(-129)', 127],
    ['toUInt8(-1)', 255],
    ['toUInt16(65537)', 1],
    ['toInt32(2147483648)', -2147483648],
    ['toUInt64(-1)', '18446744073709551615'],
    ['toInt64(9223372036854775808)', '-9223372036854775808'],
    ['toString(42)', '42'],
    ["multiIf(1 > 2, 'a', 2 > 1, 'b', 'c')", 'b'],
    ["if(1 > 2, 'a', 'b')", 'b'],
    ["has(['a', 'b'], 'b')", true],
    ["hasAny(['a', 'b'], ['c', 'a'])", true],
    ["hasAll(['a', 'b'], ['a', 'c'])", false],
    ['arrayMap(x -> x * 2, [1, 2])', [2, 4]],
    ['arrayFilter(x -> x > 1, [1, 2, 3])', [2, 3]],
    ["startsWith('key_1', 'key_')", true],
    ["endsWith('key_1', '_1')", true],
    ["position('l' IN 'hello')", '3'],
    ["locate('hello', 'l')", '3'],
    ['intDiv(7, 2)', 3],
    ["length(['a', 'b'])", '2'],
    ["EXTRACT(HOUR FROM toDateTime('2024-01-01 05:06:07'))", '5'],
    ["toYear(toDate('2024-02-29'))", '2024'],
    ["toMonth(toDate('2024-02-29'))", '2'],
    ["toDayOfMonth(toDate('2024-02-29'))", '29'],
    ["toDayOfWeek(toDate('2024-01-07'))", '7'],
    ["toDayOfYear(toDate('2024-02-01'))", '32'],
    ["toHour(toDateTime('2024-02-29 13:14:15'))", '13'],
    ["toMinute(toDateTime('2024-02-29 13:14:15'))", '14'],
    ["toSecond(toDateTime('2024-02-29 13:14:15'))", '15'],
    ['toHour(1704070800123)', '1'],
    ["toYYYYMM(toDateTime('2024-02-29 13:14:15'))", '202402'],
    ["toYYYYMMDD(toDate('2024-02-29'))", '20240229'],
    ["dateDiff('day', toDate('2024-01-01'), toDate('2024-01-31'))", '30'],
    ["dateDiff('hour', toDateTime('2024-01-01 00:59:00'), toDateTime('2024-01-01 01:00:00'))", '1'],
    ["match('VALID', '^VAL')", true],
    ['modulo(7, 3)', 1],
    ["splitByChar('=', 'path=/v1')", ['path', '/v1']],
    ["splitByString('::', 'a::b')", ['a', 'b']],
    ["empty('')", true],
    ["notEmpty(['a'])", true],
    ['empty([1])', false],
    ["arrayElement(['a', 'b', 'c'], 2)", 'b'],
    ['toInt8(-3.7)', -3],
    ['toInt16(300)', 300],
    ['toUInt8(1 = 1)', 1],
    ['toUInt16(65000)', 65000],
    ["arrayElement(['a', 'b', 'c'], -1)", 'c'],
  ])('%s = %j', async (expression, expected) => {
    expect(await one(expression)).toEqual(expected);
  });

  it("now() is UTC whatever DuckDB's TimeZone", async () => {
    await con.run("SET TimeZone = 'America/New_York'");
    try {
      // Both in one query: two queries may straddle a second.
      const { s: seconds, t: text } = (await rows('SELECT toUnixTimestamp(now()) AS s, now() AS t'))[0] as { s: unknown; t: unknown };
      expect(Math.abs(Number(seconds) - Date.now() / 1000)).toBeLessThan(5);
      expect(String(text)).toBe(new Date(Number(seconds) * 1000).toISOString().slice(0, 19).replace('T', ' '));
    } finally {
      await con.run("SET TimeZone = 'UTC'");
    }
  });

  it('avg of a Bool is the share of true, as in ClickHouse', async () => {
    expect(await rows("SELECT avg(passed) AS p, avgIf(passed, identifier = 'customer_123') AS q FROM ratelimits_v1", RATELIMIT)).toEqual([{ p: 2 / 3, q: 0.5 }]);
    expect(await rows("SELECT avg(outcome = 'VALID') AS v FROM key_verifications_v1 WHERE key_space_id = 'ks_1'")).toEqual([{ v: 2 / 3 }]);
  });

  it('anyLast, argMax and argMin (with -If too)', async () => {
    expect(await rows("SELECT argMax(outcome, time) AS a, argMin(request_id, time) AS b, argMaxIf(request_id, time, outcome = 'VALID') AS c FROM key_verifications_v1 WHERE key_space_id = 'ks_1'")).toEqual([{ a: 'VALID', b: 'r5', c: 'r1' }]);
    expect((await rows('SELECT anyLast(outcome) AS l FROM key_verifications_v1'))[0]?.l).toEqual(expect.any(String));
  });

  it('the -If combinator filters any aggregate', async () => {
    expect(await rows("SELECT uniqIf(key_id, outcome = 'VALID') AS u, avgIf(spent_credits, outcome = 'VALID') AS a, maxIf(spent_credits, key_space_id = 'ks_2') AS m FROM key_verifications_v1")).toEqual([{ u: '3', a: 15, m: '3' }]);
  });

  it('integers beyond 2^53 and HUGEINTs survive the round trip through JSON', async () => {
    expect(await rows('SELECT 9007199254740993 AS a, 18446744073709551615 AS b, -170141183460469231731687303715884105727 AS c')).toEqual([{ a: '9007199254740993', b: '18446744073709551615', c: '-170141183460469231731687303715884105727' }]);
  });

  it('uniq / groupArray(DISTINCT) / groupUniqArray count and collect distinct values', async () => {
    expect(await rows("SELECT uniq(key_id) AS u, uniqExact(key_id) AS e, countDistinct(key_id) AS c, groupArray(DISTINCT outcome) AS g FROM key_verifications_v1 WHERE key_space_id = 'ks_1'")).toEqual([{ u: '1', e: '1', c: '1', g: expect.arrayContaining(['VALID', 'RATE_LIMITED']) }]);
  });
});

describe('floating-point constants', () => {
  it('whole numbers written in scientific notation stay DOUBLE through the rewrite (1e3 is 1000.0, not 1000)', async () => {
    expect(await rows("SELECT 1e3 AS k, 1.5e3 AS m, -2e3 AS n, 0.5e1 AS o, 1e300 AS p")).toEqual([{ k: '1000.0', m: '1500.0', n: '-2000.0', o: '5.0', p: 1e300 }]);
    const [row] = await rows('SELECT max(time) / 1e3 AS s, toDateTime(min(time) / 1e3) AS t FROM key_verifications_v1');
    expect(Number(row?.s)).toBeGreaterThan(1_700_000_000);
    expect(String(row?.t)).toMatch(/^20\d\d-/);
  });
});

describe('unaliased columns, named as ClickHouse names them', () => {
  it.each([
    ['count()', 'count()'],
    ['count(*)', 'count()'],
    ['COUNT(*)', 'COUNT()'],
    ["countIf(outcome = 'VALID')", "countIf(equals(outcome, 'VALID'))"],
    ['sum(spent_credits) + 1', 'plus(sum(spent_credits), 1)'],
    ['-sum(spent_credits)', 'negate(sum(spent_credits))'],
    ['uniq(key_id)', 'uniq(key_id)'],
    ['count(DISTINCT key_id)', 'countDistinct(key_id)'],
    ['max(toStartOfHour(time))', 'max(toStartOfHour(time))'],
    ["sumIf(spent_credits, outcome IN ('VALID', 'RATE_LIMITED') AND key_id != 'x')", "sumIf(spent_credits, and(in(outcome, ('VALID', 'RATE_LIMITED')), notEquals(key_id, 'x')))"],
    ["countIf(NOT has(tags, 'it''s') OR spent_credits >= 0.5)", "countIf(or(not(has(tags, 'it\\'s')), greaterOrEquals(spent_credits, 0.5)))"],
    ['countIf(time >= now() - INTERVAL 7 DAY)', 'countIf(greaterOrEquals(time, minus(now(), toIntervalDay(7))))'],
    ['1', '1'],
    ["'x'", "'x'"],
  ])('%s is column %s', async (expression, name) => {
    expect(Object.keys((await rows(`SELECT ${expression} FROM key_verifications_v1`))[0] ?? {})).toEqual([name]);
  });

  it('keeps aliases and plain columns as written, and DuckDB\'s names where ClickHouse\'s are not followed', async () => {
    const [row] = await rows("SELECT outcome, count() AS total, k.key_id, CASE WHEN outcome = 'VALID' THEN 1 ELSE 0 END FROM key_verifications_v1 AS k GROUP BY ALL LIMIT 1");
    expect(Object.keys(row ?? {}).slice(0, 3)).toEqual(['outcome', 'total', 'key_id']);
    expect(Object.keys(row ?? {})).toHaveLength(4);
  });

  it('an outer query reads a named column of a subquery by that name', async () => {
    expect(await rows('SELECT "count()" AS n FROM (SELECT count() FROM key_verifications_v1)')).toEqual([{ n: '6' }]);
  });
});

// ── confinement ───────────────────────────────────────────────────────────────────────

describe('scoping', () => {
  /** Queries that would show another workspace's or key space's rows if anything leaked. */
  const probes = [
    'SELECT workspace_id, key_space_id FROM key_verifications_v1',
    "SELECT workspace_id, key_space_id FROM key_verifications_v1 WHERE workspace_id = 'ws_b' OR 1 = 1",
    'SELECT k.workspace_id, k.key_space_id FROM key_verifications_v1 AS k',
    'SELECT workspace_id, key_space_id FROM key_verifications_per_minute_v1',
    'SELECT workspace_id, key_space_id FROM key_verifications_per_month_v1',
    'WITH x AS (SELECT * FROM key_verifications_v1) SELECT workspace_id, key_space_id FROM x',
    'WITH x AS (SELECT * FROM key_verifications_v1), y AS (SELECT * FROM x) SELECT workspace_id, key_space_id FROM y',
    'SELECT workspace_id, key_space_id FROM (SELECT * FROM (SELECT * FROM key_verifications_per_hour_v1))',
    'SELECT workspace_id, key_space_id FROM key_verifications_v1 UNION ALL SELECT workspace_id, key_space_id FROM key_verifications_per_day_v1',
    'SELECT a.workspace_id, b.key_space_id FROM key_verifications_v1 a JOIN key_verifications_v1 b ON a.external_id = b.external_id',
    'SELECT b.workspace_id, b.key_space_id FROM key_verifications_v1 a LEFT JOIN key_verifications_per_day_v1 b USING (key_id)',
    'SELECT workspace_id, key_space_id FROM key_verifications_v1 WHERE key_id IN (SELECT key_id FROM key_verifications_v1)',
    'SELECT workspace_id, key_space_id FROM key_verifications_v1 k WHERE EXISTS (SELECT 1 FROM key_verifications_per_day_v1 d WHERE d.key_id = k.key_id)',
    'SELECT (SELECT max(workspace_id) FROM key_verifications_v1) AS workspace_id, (SELECT max(key_space_id) FROM key_verifications_v1) AS key_space_id',
    'SELECT workspace_id, key_space_id FROM key_verifications_v1 EXCEPT SELECT workspace_id, key_space_id FROM key_verifications_v1 WHERE false',
    'WITH key_verifications_v1 AS (SELECT * FROM key_verifications_v1) SELECT workspace_id, key_space_id FROM key_verifications_v1',
    'SELECT workspace_id, key_space_id FROM key_verifications_v1, (SELECT 1) AS one',
    'SELECT * EXCLUDE (tags) FROM key_verifications_v1',
    'SELECT COLUMNS(\'.*_id\') FROM key_verifications_v1',
    'SELECT workspace_id, key_space_id FROM KEY_VERIFICATIONS_V1',
  ];

  it.each(probes)('%s', async (query) => {
    const all = await rows(query);
    expect(all.length).toBeGreaterThan(0);
    for (const row of all) expect(row.workspace_id).toBe('ws_a');
    const scoped = await rows(query, { ...VERIFY, ids: ['ks_2'] });
    for (const row of scoped) expect([row.workspace_id, row.key_space_id]).toEqual(['ws_a', 'ks_2']);
  });

  it('rate-limit tables are confined the same way', async () => {
    for (const row of await rows('SELECT workspace_id, namespace_id FROM ratelimits_v1 UNION ALL SELECT workspace_id, namespace_id FROM ratelimits_per_month_v1', RATELIMIT)) expect(row.workspace_id).toBe('ws_a');
    const scoped = await rows('WITH r AS (SELECT * FROM ratelimits_v1) SELECT DISTINCT namespace_id FROM r', { ...RATELIMIT, ids: ['rlns_5678'] });
    expect(scoped).toEqual([{ namespace_id: 'rlns_5678' }]);
  });

  it('a CTE named like a stored table is the CTE; outside its WITH the name is the stored table, refused', async () => {
    expect(await rows('WITH verifications AS (SELECT 1 AS x), y AS (SELECT * FROM verifications) SELECT * FROM y')).toEqual([{ x: 1 }]);
    expect((await refusal('WITH y AS (SELECT * FROM verifications), verifications AS (SELECT 1 AS x) SELECT * FROM y')).errorName).toBe('invalid_analytics_table');
  });

  it('quotes in the workspace id and the ids are data, not SQL', async () => {
    expect(await rows('SELECT count(*) AS n FROM key_verifications_v1', { workspaceId: "ws_a' OR '1' = '1", kind: 'verifications' })).toEqual([{ n: '0' }]);
    expect(await rows('SELECT count(*) AS n FROM key_verifications_v1', { ...VERIFY, ids: ["ks_1') OR ('1' = '1"] })).toEqual([{ n: '0' }]);
  });

  it('the translation of a simple query is stable', async () => {
    const query = "SELECT countIf(outcome = 'VALID') AS valid FROM key_verifications_v1 WHERE time >= now() - INTERVAL 1 DAY";
    const sql = await translate(query, { workspaceId: 'ws_a', kind: 'verifications', ids: ['ks_1', 'ks_2'] }, parser);
    expect(sql).toBe(
      'SELECT count_star() FILTER (WHERE (outcome = \'VALID\')) AS "valid" FROM (SELECT request_id, "time", workspace_id, key_space_id, external_id, key_id, outcome, region, "source", app_id, tags, spent_credits ' +
        "FROM (SELECT * FROM verification_events WHERE (dim = ANY(SELECT id FROM verification_dims WHERE ((workspace_id = 'ws_a') AND (key_space_id IN ('ks_1', 'ks_2')))))) AS e " +
        "INNER JOIN (SELECT * FROM verification_dims WHERE ((workspace_id = 'ws_a') AND (key_space_id IN ('ks_1', 'ks_2')))) AS d ON ((d.id = e.dim))) AS key_verifications_v1 " +
        'WHERE ("time" >= epoch_ms((date_trunc(\'second\', timezone(\'UTC\', now())) - to_days(CAST(trunc(CAST(1 AS DOUBLE)) AS INTEGER)))))',
    );
    expect(await translate(query, { workspaceId: 'ws_a', kind: 'verifications', ids: ['ks_1', 'ks_2'] }, parser)).toBe(sql);
  });
});

describe('the public tables of a scope, kept', () => {
  it('are parsed once per scope, and a kept scope translates as a new one does', async () => {
    const views = new PublicViews();
    let serialized = 0;
    const counting: SqlParser = { serialize: (sql) => (serialized++, parser.serialize(sql)), deserialize: (ast) => parser.deserialize(ast) };
    const query = "SELECT count(*) AS n FROM key_verifications_v1 WHERE outcome = 'VALID'";
    const fresh = await translate(query, VERIFY, parser);
    expect(await translate(query, VERIFY, counting, views)).toBe(fresh);
    expect(serialized).toBe(3);
    serialized = 0;
    expect(await translate(query, VERIFY, counting, views)).toBe(fresh);
    expect(serialized).toBe(2);
    // Another workspace, or the same one scoped to some APIs, is another scope.
    serialized = 0;
    const scoped = await translate(query, { ...VERIFY, ids: ['ks_1'] }, counting, views);
    expect(serialized).toBe(3);
    expect(scoped).toContain("'ks_1'");
    expect(await translate(query, { workspaceId: 'ws_b', kind: 'verifications' }, counting, views)).toContain("'ws_b'");
    expect(serialized).toBe(6);
  });
});

describe('the final check', () => {
  /** A parser whose printer changes the SQL: what a DuckDB printing bug would do. */
  const tampering = (change: (sql: string) => string): SqlParser => ({ serialize: (sql) => parser.serialize(sql), deserialize: async (ast) => change(await parser.deserialize(ast)) });
  const query = "SELECT count(*) AS n FROM key_verifications_v1 WHERE outcome = 'VALID'";

  it.each([
    ['drops the scope filter', (sql: string) => sql.replace("(workspace_id = 'ws_a')", '(1 = 1)'), 'without the scope'],
    ['joins another stored table', (sql: string) => sql.replace('FROM verification_events WHERE', 'FROM verification_events, ratelimit_events WHERE'), 'reads the table'],
    ['reads a stored table directly', (sql: string) => `${sql} UNION ALL SELECT count(*) FROM verification_events`, 'without the scope'],
    ['reads the dims of every workspace', (sql: string) => sql.replace("FROM verification_dims WHERE (workspace_id = 'ws_a')) AS d", 'FROM verification_dims) AS d'), 'without the scope'],
    ['calls a function off the allowlist', (sql: string) => sql.replace('count_star()', "getenv('HOME')"), 'calls getenv'],
    ['reads a file', (sql: string) => sql.replace('FROM (SELECT', "FROM read_csv('/etc/passwd'), (SELECT"), 'holds a TABLE_FUNCTION'],
  ])('refuses SQL that %s (a bug, not a 400)', async (_, change, message) => {
    const err = await translate(query, VERIFY, tampering(change)).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(Error);
    expect(err).not.toBeInstanceOf(ApiError);
    expect((err as Error).message).toContain(message);
  });
});

describe('ClickHouse names in backticks', () => {
  it('are the names in double quotes: `limit` of ratelimits_v1, a doubled backtick inside; strings and comments keep theirs', async () => {
    const sql = "SELECT `limit` AS a, \"limit\" AS b, '`x`' AS c /* `y` */ FROM ratelimits_v1 WHERE `identifier` <> 'nobody'";
    const viaQuotes = await rows("SELECT \"limit\" AS a, \"limit\" AS b, '`x`' AS c FROM ratelimits_v1 WHERE \"identifier\" <> 'nobody'", RATELIMIT);
    expect(viaQuotes.length).toBeGreaterThan(0);
    expect(await rows(sql, RATELIMIT)).toEqual(viaQuotes);
    expect(await rows('SELECT 1 AS `we``ird`')).toEqual([{ 'we`ird': 1 }]);
    expect((await refusal('SELECT `unclosed FROM key_verifications_v1')).errorName).toMatch(/^invalid_analytics_/);
  });
});

describe('refusals', () => {
  const HOSTILE: [string, ErrorName, string?][] = [
    // not one SELECT
    ["INSERT INTO verifications (request_id) VALUES ('x')", 'invalid_analytics_query_type'],
    ["UPDATE key_verifications_v1 SET outcome = 'VALID'", 'invalid_analytics_query_type'],
    ['DELETE FROM key_verifications_v1 WHERE time < now() - INTERVAL 30 DAY', 'invalid_analytics_query_type'],
    ['DROP TABLE verifications', 'invalid_analytics_query_type'],
    ['CREATE TABLE x AS SELECT 1', 'invalid_analytics_query_type'],
    ['ALTER TABLE verifications ADD COLUMN x INT', 'invalid_analytics_query_type'],
    ['TRUNCATE verifications', 'invalid_analytics_query_type'],
    ["ATTACH '/tmp/other.db' AS other", 'invalid_analytics_query_type'],
    ['DETACH other', 'invalid_analytics_query_type'],
    ["COPY (SELECT * FROM verifications) TO '/tmp/out.csv'", 'invalid_analytics_query_type'],
    ["EXPORT DATABASE '/tmp/out'", 'invalid_analytics_query_type'],
    ['PRAGMA database_list', 'invalid_analytics_query_type'],
    ["SET memory_limit = '100GB'", 'invalid_analytics_query_type'],
    ['INSTALL httpfs', 'invalid_analytics_query_type'],
    ['LOAD httpfs', 'invalid_analytics_query_type'],
    ['EXPLAIN SELECT 1', 'invalid_analytics_query_type'],
    ['CALL pragma_version()', 'invalid_analytics_query_type'],
    ['CHECKPOINT', 'invalid_analytics_query_type'],
    ['DESCRIBE verifications', 'invalid_analytics_query_type'],
    ['SHOW TABLES', 'invalid_analytics_query_type'],
    ['SUMMARIZE verifications', 'invalid_analytics_query_type'],
    ['SELECT * FROM (DESCRIBE verifications)', 'invalid_analytics_query_type'],
    ['SELECT 1; SELECT 2', 'invalid_analytics_query_type', '2 statements'],
    ['SELECT 1; -- just a comment\nDROP TABLE verifications', 'invalid_analytics_query_type'],
    ['SELECT 1 /* ; */ ; DELETE FROM verifications', 'invalid_analytics_query_type'],
    // tables
    ['SELECT * FROM verifications', 'invalid_analytics_table', "'verifications'"],
    ['SELECT * FROM verifications_rollup_day', 'invalid_analytics_table', "'verifications_rollup_day'"],
    ['SELECT * FROM ratelimits_v1', 'invalid_analytics_table', 'analytics.getRatelimits'],
    ['SELECT * FROM main.verifications', 'invalid_analytics_table', "'main.verifications'"],
    ['SELECT * FROM memory.main.key_verifications_v1', 'invalid_analytics_table', "'memory.main.key_verifications_v1'"],
    ['SELECT * FROM main.key_verifications_v1', 'invalid_analytics_table'],
    ['SELECT * FROM information_schema.tables', 'invalid_analytics_table', 'information_schema.tables'],
    ['SELECT * FROM pg_catalog.pg_tables', 'invalid_analytics_table'],
    ['SELECT * FROM system.tables', 'invalid_analytics_table', "'system.tables'"],
    ['SELECT * FROM sqlite_master', 'invalid_analytics_table'],
    ['SELECT * FROM duckdb_tables()', 'invalid_analytics_table', 'duckdb_tables()'],
    ['SELECT * FROM duckdb_settings()', 'invalid_analytics_table'],
    ["SELECT * FROM read_csv('/etc/passwd')", 'invalid_analytics_table', 'read_csv()'],
    ["SELECT * FROM read_parquet('s3://bucket/x.parquet')", 'invalid_analytics_table'],
    ["SELECT * FROM glob('/*')", 'invalid_analytics_table'],
    ['SELECT * FROM range(1000000000000)', 'invalid_analytics_table', 'range()'],
    ['SELECT * FROM generate_series(1, 10)', 'invalid_analytics_table'],
    ["SELECT * FROM query('SELECT * FROM verifications')", 'invalid_analytics_table'],
    ["SELECT * FROM '/etc/passwd'", 'invalid_analytics_table', '/etc/passwd'],
    ["SELECT * FROM url('http://acme.com/data')", 'invalid_analytics_table'],
    ["SELECT * FROM mysql('host:port', 'db', 'table', 'user', 'pass')", 'invalid_analytics_table'],
    ['SELECT * FROM key_verification WHERE time >= now() - INTERVAL 1 DAY', 'invalid_analytics_table', "'key_verification'"],
    ["SELECT * FROM key_verifications_v1, LATERAL read_csv('x')", 'invalid_analytics_table'],
    ['WITH x AS (SELECT * FROM verifications) SELECT * FROM x', 'invalid_analytics_table'],
    ['WITH verifications AS (SELECT * FROM verifications) SELECT * FROM verifications', 'invalid_analytics_table'],
    ['WITH a AS (SELECT * FROM b), b AS (SELECT 1) SELECT * FROM a', 'invalid_analytics_table', "'b'"],
    ['SELECT * FROM (WITH b AS (SELECT 1 AS x) SELECT * FROM b), b', 'invalid_analytics_table', "'b'"],
    ['SELECT (SELECT count(*) FROM verifications)', 'invalid_analytics_table'],
    ['SELECT * FROM key_verifications_v1 WHERE key_id IN (SELECT key_id FROM verifications)', 'invalid_analytics_table'],
    ['SELECT * FROM key_verifications_v1 UNION ALL SELECT * FROM verifications', 'invalid_analytics_table'],
    ['SELECT * FROM key_verifications_v1 k JOIN ratelimits r ON true', 'invalid_analytics_table'],
    // functions
    ["SELECT getenv('HOME')", 'invalid_analytics_function', "'getenv'"],
    ["SELECT current_setting('threads')", 'invalid_analytics_function', "'current_setting'"],
    ["SELECT getvariable('x')", 'invalid_analytics_function'],
    ["SELECT file('/etc/passwd') FROM key_verifications_v1", 'invalid_analytics_function', "'file'"],
    ['SELECT pg_sleep(10)', 'invalid_analytics_function'],
    ['SELECT sleep_ms(10000)', 'invalid_analytics_function'],
    ['SELECT range(10)', 'invalid_analytics_function', "'range'"],
    ['SELECT version()', 'invalid_analytics_function'],
    ['SELECT current_database()', 'invalid_analytics_function'],
    ["SELECT nextval('seq')", 'invalid_analytics_function'],
    ["SELECT repeat('x', 1000000000)", 'invalid_analytics_function'],
    ["SELECT read_text('/etc/passwd')", 'invalid_analytics_function'],
    ["SELECT pg_catalog.current_setting('threads')", 'invalid_analytics_function', "'pg_catalog.current_setting'"],
    ['SELECT system.main.getenv(\'HOME\')', 'invalid_analytics_function'],
    ["SELECT count(*) FROM key_verifications_v1 WHERE regexp_replace(outcome, 'V', 'W') = 'W'", 'invalid_analytics_function'],
    ['SELECT [x FOR x IN [1, 2]]', 'invalid_analytics_function'],
    ['SELECT quantile_cont(spent_credits, 0.5) OVER () FROM key_verifications_v1', 'invalid_analytics_function'],
    ['SELECT dictGet(\'d\', \'a\', 1)', 'invalid_analytics_function'],
    ['SELECT count(*) FROM key_verifications_v1 WHERE outcome IN (SELECT unnest(duckdb_settings()))', 'invalid_analytics_function'],
    // constructs
    ['SELECT * FROM key_verifications_v1 USING SAMPLE 10%', 'invalid_analytics_query', 'SAMPLE'],
    ['SELECT * FROM key_verifications_v1 TABLESAMPLE 10%', 'invalid_analytics_query', 'SAMPLE'],
    ['SELECT * FROM key_verifications_v1 AT (VERSION => 1)', 'invalid_analytics_query', 'AT'],
    ["SELECT * FROM key_verifications_v1 PIVOT (count(*) FOR outcome IN ('VALID'))", 'invalid_analytics_query', 'PIVOT'],
    ['SELECT * FROM key_verifications_v1 UNPIVOT (v FOR k IN (key_id, outcome))', 'invalid_analytics_query', 'PIVOT'],
    ['WITH RECURSIVE r AS (SELECT 1 AS n UNION ALL SELECT n + 1 FROM r) SELECT * FROM r', 'invalid_analytics_query', 'recursive'],
    ['SELECT outcome FROM key_verifications_v1 ORDER BY time WITH FILL', 'invalid_analytics_query', 'WITH FILL'],
    ['SELECT key_id, time FROM key_verifications_v1 ORDER BY time DESC LIMIT 1 BY key_id', 'invalid_analytics_query', 'LIMIT … BY'],
    ['SELECT topK(3)(outcome) FROM key_verifications_v1', 'invalid_analytics_query', 'parametric'],
    ['SELECT tag FROM key_verifications_v1 ARRAY JOIN tags AS tag', 'invalid_analytics_query', 'ARRAY JOIN'],
    ['SELECT count(*) FROM key_verifications_v1 SETTINGS max_threads = 64', 'invalid_analytics_query', 'SETTINGS'],
    ['SELECT outcome, count() FROM key_verifications_v1 GROUP BY outcome WITH TOTALS', 'invalid_analytics_query', 'WITH TOTALS'],
    ['SELECT * EXCEPT (tags) FROM key_verifications_v1', 'invalid_analytics_query', 'EXCLUDE'],
    ['SELECT any(outcome) FROM key_verifications_v1', 'invalid_analytics_query', 'any_value'],
    ['SELECT $1', 'invalid_analytics_query', 'parameters'],
    ['SELECT * FROM key_verifications_v1 WHERE outcome = ?', 'invalid_analytics_query', 'parameters'],
    ['SELECT toStartOfHour(time, 1, 2) FROM key_verifications_v1', 'invalid_analytics_query', 'takes 1 argument'],
    ['SELECT toStartOfInterval(time, 15) FROM key_verifications_v1', 'invalid_analytics_query', 'takes an interval'],
    ['SELECT toStartOfHour(DISTINCT time) FROM key_verifications_v1', 'invalid_analytics_query', 'not an aggregate'],
    // Unkey's error pages' examples
    ['SELCT time, outcome\nFROM key_verifications_v1', 'invalid_analytics_query', 'syntax error at or near "SELCT"'],
    ['SELECT\n  key_space_id\n  COUNT(*) as total\nFROM key_verifications_v1', 'invalid_analytics_query', 'syntax error'],
    ["SELECT key_space_id, outcome\nFROM key_verifications_v1\nWHERE key_space_id = 'ks_123", 'invalid_analytics_query'],
    ['INSERT INTO key_verifications_v1 VALUES (...)', 'invalid_analytics_query', 'syntax error'],
    ['', 'invalid_analytics_query', 'empty'],
    ['  ;  ', 'invalid_analytics_query', 'empty'],
  ];

  it.each(HOSTILE)('%s → %s', async (query, code, mentions) => {
    const err = await refusal(query);
    expect(err.errorName, err.detail).toBe(code);
    if (mentions !== undefined) expect(err.detail).toContain(mentions);
    expect(err.errors?.[0]?.location).toBe('body.query');
  });

  it('a NUL in the query is refused (DuckDB would read the text up to it only)', async () => {
    const err = await refusal('SELECT 1 AS x\0; DROP TABLE verifications');
    expect(err.errorName).toBe('invalid_analytics_query');
    expect(err.detail).toContain('NUL');
  });

  it('a query nested deeper than DuckDB binds quickly is refused before it runs (the timeout could not stop its binding)', async () => {
    const nested = (n: number, open: string, close: string, inner = '1'): string => `SELECT ${open.repeat(n)}${inner}${close.repeat(n)} AS x`;
    for (const deep of [nested(200, 'abs(', ')'), `SELECT ${Array(300).fill('spent_credits').join(' + ')} AS x FROM key_verifications_v1`, nested(300, 'CASE WHEN true THEN 1 ELSE ', ' END', '0')]) {
      const started = performance.now();
      const err = await refusal(deep);
      expect(err.errorName).toBe('invalid_analytics_query');
      expect(err.detail).toContain('nested too deeply');
      expect(performance.now() - started).toBeLessThan(2_000);
    }
    expect(await rows(nested(100, 'abs(', ')'))).toEqual([{ x: 1 }]);
    const subqueries = (n: number): string => `SELECT ${'(SELECT '.repeat(n)}1${')'.repeat(n)} AS x`;
    expect(await rows(subqueries(MAX_SUBQUERY_NESTING))).toEqual([{ x: 1 }]);
    const err = await refusal(subqueries(MAX_SUBQUERY_NESTING + 1));
    expect(err.detail).toContain(`nested more than ${MAX_SUBQUERY_NESTING} deep`);
  });

  it('the verification tables are not readable through analytics.getRatelimits', async () => {
    const err = await refusal('SELECT * FROM key_verifications_per_day_v1', RATELIMIT);
    expect(err.errorName).toBe('invalid_analytics_table');
    expect(err.detail).toContain('analytics.getVerifications');
  });
});
