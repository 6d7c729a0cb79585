// The analytics database: DuckDB in the data dir (`analytics.duckdb`), opened by the
// analytics worker only (worker.ts). Events go in batches: appended to a staging table, then
// moved, in one transaction, into the raw table and, as partial aggregates, into every
// rollup; so the rollups always agree with the raw rows, and a batch staged when the process
// died is moved at the next open.
import { DuckDBInstance, LIST, VARCHAR, type DuckDBConnection, DuckDBDateValue, DuckDBListValue, DuckDBTimestampValue, DuckDBDecimalValue, type DuckDBValue } from '@duckdb/node-api';
import { bucketOf, GRAINS, STORED_DDL, type Grain } from './schema.js';
import type { RatelimitRow, Rows, VerificationRow } from './events.js';

export const DATABASE_FILE = 'analytics.duckdb';

const STAGING_DDL = [
  `CREATE TABLE IF NOT EXISTS staged_verifications AS SELECT * FROM verifications LIMIT 0`,
  `CREATE TABLE IF NOT EXISTS staged_ratelimits AS SELECT * FROM ratelimits LIMIT 0`,
];

/**
 * The moves of a staged batch into the raw tables and the rollups (one transaction). The
 * batch is aggregated per minute once (`batch_*`, a temporary table of this connection); the
 * coarser rollups are aggregated from those few rows.
 */
const MOVE: readonly string[] = [
  `INSERT INTO verifications SELECT * FROM staged_verifications`,
  `CREATE OR REPLACE TEMP TABLE batch_verifications AS SELECT ${bucketOf('minute', 'time')} AS time, workspace_id, key_space_id, external_id, key_id, outcome, region, source, app_id, tags, count(*) AS count, sum(spent_credits) AS spent_credits FROM staged_verifications GROUP BY ALL`,
  ...GRAINS.map(
    (g) =>
      `INSERT INTO verifications_rollup_${g} SELECT ${truncate(g)}, workspace_id, key_space_id, external_id, key_id, outcome, region, source, app_id, tags, sum(count), sum(spent_credits) FROM batch_verifications GROUP BY ALL`,
  ),
  `DELETE FROM staged_verifications`,
  `INSERT INTO ratelimits SELECT * FROM staged_ratelimits`,
  `CREATE OR REPLACE TEMP TABLE batch_ratelimits AS SELECT ${bucketOf('minute', 'time')} AS time, workspace_id, namespace_id, identifier, count(*) FILTER (WHERE passed) AS passed, count(*) AS total, coalesce(sum(tokens) FILTER (WHERE passed), 0) AS passed_tokens, sum(tokens) AS total_tokens FROM staged_ratelimits GROUP BY ALL`,
  ...GRAINS.map((g) => `INSERT INTO ratelimits_rollup_${g} SELECT ${truncate(g)}, workspace_id, namespace_id, identifier, sum(passed), sum(total), sum(passed_tokens), sum(total_tokens) FROM batch_ratelimits GROUP BY ALL`),
  `DELETE FROM staged_ratelimits`,
];

/** A minute bucket (TIMESTAMP `time`) truncated to `grain`, in the rollup's type. */
function truncate(grain: Grain): string {
  return grain === 'minute' ? 'time' : grain === 'hour' ? `date_trunc('hour', time)` : `CAST(date_trunc('${grain}', time) AS DATE)`;
}

/** How long each table keeps its rows (docs/analytics.md, "Retention"): raw rows by configuration. */
export const ROLLUP_RETENTION_DAYS = { minute: 7, hour: 90, day: 1_096, month: 1_096 } as const;

export interface DatabaseOptions {
  /** DuckDB's memory limit for the whole database (ingestion and queries), e.g. '1GB'. */
  memoryLimit: string;
  threads: number;
  /** KEYWARD_REGION: the `region` of every verification this node records. */
  region: string;
}

export class AnalyticsDatabase {
  private constructor(
    private readonly instance: DuckDBInstance,
    private readonly ingestion: DuckDBConnection,
    private readonly region: string,
  ) {}

  /**
   * Opens (creating) the database at `path`. External access (files, URLs, extensions) is
   * off for every connection and the configuration locked: no query can read a file, load
   * anything or change a setting.
   */
  static async open(path: string, options: DatabaseOptions): Promise<AnalyticsDatabase> {
    const instance = await DuckDBInstance.create(path, {
      memory_limit: options.memoryLimit,
      threads: String(options.threads),
      enable_external_access: 'false',
      autoinstall_known_extensions: 'false',
      autoload_known_extensions: 'false',
      allow_community_extensions: 'false',
      lock_configuration: 'true',
    });
    const ingestion = await instance.connect();
    for (const ddl of [...STORED_DDL, ...STAGING_DDL]) await ingestion.run(ddl);
    const db = new AnalyticsDatabase(instance, ingestion, options.region);
    await db.move();
    return db;
  }

  /** A connection of its own (a query's: interrupting it stops only that query). */
  connect(): Promise<DuckDBConnection> {
    return this.instance.connect();
  }

  /** Writes a batch of events: staged, then moved with its rollups in one transaction. */
  async ingest(rows: Rows): Promise<void> {
    if (rows.verifications.length > 0) await this.stage('staged_verifications', rows.verifications, (a, r) => appendVerification(a, r, this.region));
    if (rows.ratelimits.length > 0) await this.stage('staged_ratelimits', rows.ratelimits, appendRatelimit);
    if (rows.verifications.length > 0 || rows.ratelimits.length > 0) await this.move();
  }

  private async stage<T>(table: string, rows: readonly T[], append: (a: Appender, row: T) => void): Promise<void> {
    const appender = await this.ingestion.createAppender(table);
    try {
      for (const row of rows) {
        append(appender, row);
        appender.endRow();
      }
      appender.flushSync();
    } finally {
      appender.closeSync();
    }
  }

  private async move(): Promise<void> {
    await this.ingestion.run('BEGIN TRANSACTION');
    try {
      for (const sql of MOVE) await this.ingestion.run(sql);
      await this.ingestion.run('COMMIT');
    } catch (err) {
      await this.ingestion.run('ROLLBACK').catch(() => undefined);
      throw err;
    }
  }

  /** Deletes what is older than each table keeps: raw rows after `rawDays`, rollups after ROLLUP_RETENTION_DAYS. */
  async retain(nowMs: number, rawDays: number): Promise<void> {
    const before = (days: number): number => nowMs - days * 86_400_000;
    await this.ingestion.run(`DELETE FROM verifications WHERE time < ${before(rawDays)}`);
    await this.ingestion.run(`DELETE FROM ratelimits WHERE time < ${before(rawDays)}`);
    for (const g of GRAINS) {
      const cutoff = `make_timestamp(${before(ROLLUP_RETENTION_DAYS[g])} * 1000)`;
      for (const t of ['verifications', 'ratelimits']) await this.ingestion.run(`DELETE FROM ${t}_rollup_${g} WHERE time < ${cutoff}`);
    }
  }

  /** Writes everything to the database file (DuckDB's WAL is replayed at open otherwise). */
  async checkpoint(): Promise<void> {
    await this.ingestion.run('CHECKPOINT');
  }

  close(): void {
    this.ingestion.closeSync();
    this.instance.closeSync();
  }
}

type Appender = Awaited<ReturnType<DuckDBConnection['createAppender']>>;
const TAGS = LIST(VARCHAR);

function appendVerification(a: Appender, r: VerificationRow, region: string): void {
  a.appendVarchar(r.requestId);
  a.appendBigInt(BigInt(r.time));
  a.appendVarchar(r.workspaceId);
  a.appendVarchar(r.keySpaceId);
  a.appendVarchar(r.externalId);
  a.appendVarchar(r.keyId);
  a.appendVarchar(r.outcome);
  a.appendVarchar(region);
  a.appendVarchar('api');
  a.appendVarchar('');
  a.appendList(r.tags, TAGS);
  a.appendBigInt(BigInt(r.spentCredits));
}

function appendRatelimit(a: Appender, r: RatelimitRow): void {
  a.appendVarchar(r.requestId);
  a.appendBigInt(BigInt(r.time));
  a.appendVarchar(r.workspaceId);
  a.appendVarchar(r.namespaceId);
  a.appendVarchar(r.namespaceName);
  a.appendVarchar(r.identifier);
  a.appendBoolean(r.passed);
  a.appendDouble(r.latencyMs);
  a.appendVarchar(r.overrideId);
  a.appendBigInt(BigInt(r.limit));
  a.appendBigInt(BigInt(r.remaining));
  a.appendBigInt(BigInt(r.resetAt));
  a.appendBigInt(BigInt(r.tokens));
}

/**
 * A DuckDB value as Unkey's analytics API returns it in JSON: integers of any width as
 * numbers, DateTime as 'YYYY-MM-DD hh:mm:ss' and Date as 'YYYY-MM-DD' (ClickHouse's text
 * forms, in UTC), arrays as arrays.
 */
export function jsonValue(v: DuckDBValue): unknown {
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return v;
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (typeof v === 'bigint') return Number(v);
  if (v instanceof DuckDBTimestampValue) return clickHouseDateTime(Number(v.micros / 1000n));
  if (v instanceof DuckDBDateValue) return new Date(v.days * 86_400_000).toISOString().slice(0, 10);
  if (v instanceof DuckDBListValue) return v.items.map(jsonValue);
  if (v instanceof DuckDBDecimalValue) return Number(v.toString());
  return String(v);
}

function clickHouseDateTime(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
}
