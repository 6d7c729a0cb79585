// The analytics database's tables (docs/analytics.md): what keyward stores in DuckDB, and
// the public tables Unkey's queries name, each a view over them.
//
// Stored (internal names, never visible to a query):
//  - `verifications`, `ratelimits`: one row per decision (the raw events);
//  - `verifications_rollup_{minute,hour,day,month}`, `ratelimits_rollup_{…}`: partial
//    aggregates appended with every ingested batch (one row per group of the batch), so the
//    public rollups are exact as soon as a batch is in; compaction merges them later.
// Public (Unkey's names): the raw tables and the rollups re-aggregated over the partial rows.

/** Unkey's public tables, by the procedure that may read them. */
export const VERIFICATION_TABLES = ['key_verifications_v1', 'key_verifications_per_minute_v1', 'key_verifications_per_hour_v1', 'key_verifications_per_day_v1', 'key_verifications_per_month_v1'] as const;
export const RATELIMIT_TABLES = ['ratelimits_v1', 'ratelimits_per_minute_v1', 'ratelimits_per_hour_v1', 'ratelimits_per_day_v1', 'ratelimits_per_month_v1'] as const;
export type PublicTable = (typeof VERIFICATION_TABLES)[number] | (typeof RATELIMIT_TABLES)[number];

export const GRAINS = ['minute', 'hour', 'day', 'month'] as const;
export type Grain = (typeof GRAINS)[number];

/** The DDL of the stored tables (idempotent). `time` of raw events is Unix milliseconds, as Unkey's. */
export const STORED_DDL: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS verifications (
    request_id VARCHAR NOT NULL, time BIGINT NOT NULL, workspace_id VARCHAR NOT NULL, key_space_id VARCHAR NOT NULL,
    external_id VARCHAR NOT NULL, key_id VARCHAR NOT NULL, outcome VARCHAR NOT NULL, region VARCHAR NOT NULL,
    source VARCHAR NOT NULL, app_id VARCHAR NOT NULL, tags VARCHAR[] NOT NULL, spent_credits BIGINT NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS ratelimits (
    request_id VARCHAR NOT NULL, time BIGINT NOT NULL, workspace_id VARCHAR NOT NULL, namespace_id VARCHAR NOT NULL,
    namespace_name VARCHAR NOT NULL, identifier VARCHAR NOT NULL, passed BOOLEAN NOT NULL, latency DOUBLE NOT NULL,
    override_id VARCHAR NOT NULL, "limit" BIGINT NOT NULL, remaining BIGINT NOT NULL, reset_at BIGINT NOT NULL, tokens BIGINT NOT NULL)`,
  ...GRAINS.map(
    (g) => `CREATE TABLE IF NOT EXISTS verifications_rollup_${g} (
    time ${g === 'minute' || g === 'hour' ? 'TIMESTAMP' : 'DATE'} NOT NULL, workspace_id VARCHAR NOT NULL, key_space_id VARCHAR NOT NULL,
    external_id VARCHAR NOT NULL, key_id VARCHAR NOT NULL, outcome VARCHAR NOT NULL, region VARCHAR NOT NULL,
    source VARCHAR NOT NULL, app_id VARCHAR NOT NULL, tags VARCHAR[] NOT NULL, count BIGINT NOT NULL, spent_credits BIGINT NOT NULL)`,
  ),
  ...GRAINS.map(
    (g) => `CREATE TABLE IF NOT EXISTS ratelimits_rollup_${g} (
    time ${g === 'minute' || g === 'hour' ? 'TIMESTAMP' : 'DATE'} NOT NULL, workspace_id VARCHAR NOT NULL, namespace_id VARCHAR NOT NULL,
    identifier VARCHAR NOT NULL, passed BIGINT NOT NULL, total BIGINT NOT NULL, passed_tokens BIGINT NOT NULL, total_tokens BIGINT NOT NULL)`,
  ),
];

/** DuckDB's truncation of a grain, applied to a raw event's time (ms). */
export function bucketOf(grain: Grain, timeMsColumn: string): string {
  const ts = `make_timestamp(${timeMsColumn} * 1000)`;
  return grain === 'minute' || grain === 'hour' ? `date_trunc('${grain}', ${ts})` : `CAST(date_trunc('${grain}', ${ts}) AS DATE)`;
}

/**
 * The SELECT behind each public table, over the stored ones, confined to `where` (a
 * condition on workspace_id and key_space_id / namespace_id, built by the caller from the
 * root key's scope). Its columns are the public table's, in Unkey's order.
 */
export function publicSelect(table: PublicTable, where: string): string {
  if (table === 'key_verifications_v1') {
    return `SELECT request_id, time, workspace_id, key_space_id, external_id, key_id, outcome, region, source, app_id, tags, spent_credits FROM verifications WHERE ${where}`;
  }
  if (table === 'ratelimits_v1') {
    return `SELECT request_id, time, workspace_id, namespace_id, identifier, passed, latency, override_id, "limit", remaining, reset_at, tokens FROM ratelimits WHERE ${where}`;
  }
  const grain = /_per_(minute|hour|day|month)_v1$/.exec(table)?.[1] as Grain;
  if (table.startsWith('key_verifications')) {
    return `SELECT time, workspace_id, key_space_id, external_id, key_id, outcome, region, source, app_id, tags, CAST(sum(count) AS BIGINT) AS count, CAST(sum(spent_credits) AS BIGINT) AS spent_credits FROM verifications_rollup_${grain} WHERE ${where} GROUP BY ALL`;
  }
  return `SELECT time, workspace_id, namespace_id, identifier, CAST(sum(passed) AS BIGINT) AS passed, CAST(sum(total) AS BIGINT) AS total, CAST(sum(passed_tokens) AS BIGINT) AS passed_tokens, CAST(sum(total_tokens) AS BIGINT) AS total_tokens FROM ratelimits_rollup_${grain} WHERE ${where} GROUP BY ALL`;
}
