// The analytics database: DuckDB in the data dir (`analytics.duckdb`), opened by the
// analytics worker only (worker.ts). Events come in batches of JSON lines, as the engine
// buffered them (native/src/events.rs): DuckDB reads the whole batch in one transaction,
// into staging tables (one row per decision, a multiLimit's limits each), then into the raw
// tables and, as partial aggregates, into every rollup; so the rollups always agree with the
// raw rows, and no JavaScript runs per event.
import { DuckDBInstance, type DuckDBConnection, DuckDBDateValue, DuckDBListValue, DuckDBTimestampValue, DuckDBDecimalValue, type DuckDBValue } from '@duckdb/node-api';
import { bucketOf, GRAINS, STORED_DDL, type Grain } from './schema.js';
import type { SqlParser } from './dialect.js';

export const DATABASE_FILE = 'analytics.duckdb';

/**
 * What a batch's lines hold (events.rs), for json_transform: parsed once per line into a
 * STRUCT; a field a body or reply lacks is NULL. `try` makes a line that does not parse a
 * NULL event (counted as failed) instead of failing the batch.
 */
const EVENT = (body: object, data: object): string => `try(json_transform(line, '${JSON.stringify({ k: 'UTINYINT', t: 'BIGINT', l: 'UBIGINT', w: 'VARCHAR', r: 'VARCHAR', s: 'VARCHAR', b: body, p: { data } })}')) AS e`;
const VERIFY_EVENT = EVENT({ tags: ['VARCHAR'], credits: { cost: 'BIGINT' } }, { code: 'VARCHAR', keyId: 'VARCHAR', credits: 'BIGINT', identity: { externalId: 'VARCHAR' } });
const LIMIT_FIELDS = { namespace: 'VARCHAR', identifier: 'VARCHAR', cost: 'BIGINT' };
const LIMIT_EVENT = EVENT(LIMIT_FIELDS, { success: 'BOOLEAN', limit: 'BIGINT', remaining: 'BIGINT', reset: 'BIGINT', overrideId: 'VARCHAR' });
const MULTI_LIMIT_EVENT = EVENT([LIMIT_FIELDS], { limits: [{ passed: 'BOOLEAN', limit: 'BIGINT', remaining: 'BIGINT', reset: 'BIGINT', overrideId: 'VARCHAR' }] });

/** The lines of one kind of a batch ($1): split in DuckDB, picked by their first bytes (no parse). */
const LINES = (kind: number): string => `(SELECT unnest(string_split($1, chr(10))) AS line) WHERE starts_with(line, '{"k":${kind},')`;

/**
 * A batch of lines ($1; $2 the region) into the raw tables and every rollup (one
 * transaction). Each kind's rows are read into a temporary table of this connection
 * (`batch_*`), which the raw table and the per-minute aggregate are filled from; the coarser
 * rollups are aggregated from those few minute rows. A verification spent credits when it
 * was VALID and the key has credits (its reply shows them): its cost, 1 unless the request
 * said.
 */
export const INGEST: readonly string[] = [
  `CREATE OR REPLACE TEMP TABLE batch_verifications AS SELECT e.r AS request_id, e.t AS time, e.w AS workspace_id, e.s AS key_space_id, coalesce(e.p.data.identity.externalId, '') AS external_id,
     coalesce(e.p.data.keyId, '') AS key_id, e.p.data.code AS outcome, $2 AS region, 'api' AS source, '' AS app_id, coalesce(e.b.tags, []) AS tags,
     CASE WHEN e.p.data.code = 'VALID' AND e.p.data.credits IS NOT NULL THEN coalesce(e.b.credits.cost, 1) ELSE 0 END AS spent_credits
   FROM (SELECT ${VERIFY_EVENT} FROM ${LINES(1)}) WHERE e.p.data.code IS NOT NULL`,
  `CREATE OR REPLACE TEMP TABLE batch_ratelimits AS
   SELECT e.r AS request_id, e.t AS time, e.w AS workspace_id, e.s AS namespace_id, coalesce(e.b.namespace, '') AS namespace_name, coalesce(e.b.identifier, '') AS identifier,
     coalesce(e.p.data.success, false) AS passed, e.l / 1000.0 AS latency, coalesce(e.p.data.overrideId, '') AS override_id, coalesce(e.p.data."limit", 0) AS "limit",
     coalesce(e.p.data.remaining, 0) AS remaining, coalesce(e.p.data.reset, 0) AS reset_at, coalesce(e.b.cost, 1) AS tokens
   FROM (SELECT ${LIMIT_EVENT} FROM ${LINES(2)}) WHERE e.p.data.success IS NOT NULL
   UNION ALL
   SELECT e.r, e.t, e.w, string_split(e.s, chr(10))[i], coalesce(e.b[i].namespace, ''), coalesce(e.b[i].identifier, ''), coalesce(e.p.data.limits[i].passed, false), e.l / 1000.0,
     coalesce(e.p.data.limits[i].overrideId, ''), coalesce(e.p.data.limits[i]."limit", 0), coalesce(e.p.data.limits[i].remaining, 0), coalesce(e.p.data.limits[i].reset, 0), coalesce(e.b[i].cost, 1)
   FROM (SELECT e, unnest(range(1, len(e.b) + 1)) AS i FROM (SELECT ${MULTI_LIMIT_EVENT} FROM ${LINES(3)}) WHERE e.p.data.limits IS NOT NULL)`,
];

/** The moves of a batch (`batch_*`) into the raw tables and the rollups. */
const MOVE: readonly string[] = [
  `INSERT INTO verifications SELECT * FROM batch_verifications`,
  `CREATE OR REPLACE TEMP TABLE minute_verifications AS SELECT ${bucketOf('minute', 'time')} AS time, workspace_id, key_space_id, external_id, key_id, outcome, region, source, app_id, tags, count(*) AS count, sum(spent_credits) AS spent_credits FROM batch_verifications GROUP BY ALL`,
  ...GRAINS.map(
    (g) =>
      `INSERT INTO verifications_rollup_${g} SELECT ${truncate(g)}, workspace_id, key_space_id, external_id, key_id, outcome, region, source, app_id, tags, sum(count), sum(spent_credits) FROM minute_verifications GROUP BY ALL`,
  ),
  `INSERT INTO ratelimits SELECT * FROM batch_ratelimits`,
  `CREATE OR REPLACE TEMP TABLE minute_ratelimits AS SELECT ${bucketOf('minute', 'time')} AS time, workspace_id, namespace_id, identifier, count(*) FILTER (WHERE passed) AS passed, count(*) AS total, coalesce(sum(tokens) FILTER (WHERE passed), 0) AS passed_tokens, sum(tokens) AS total_tokens FROM batch_ratelimits GROUP BY ALL`,
  ...GRAINS.map((g) => `INSERT INTO ratelimits_rollup_${g} SELECT ${truncate(g)}, workspace_id, namespace_id, identifier, sum(passed), sum(total), sum(passed_tokens), sum(total_tokens) FROM minute_ratelimits GROUP BY ALL`),
];

/** A minute bucket (TIMESTAMP `time`) truncated to `grain`, in the rollup's type. */
function truncate(grain: Grain): string {
  return grain === 'minute' ? 'time' : grain === 'hour' ? `date_trunc('hour', time)` : `CAST(date_trunc('${grain}', time) AS DATE)`;
}

/** DuckDB's parser on `con` (dialect.ts reads and prints queries through it), one statement at a time. */
export function sqlParser(con: DuckDBConnection): SqlParser {
  const one = async (sql: string, arg: string): Promise<string> => {
    const p = await con.prepare(sql);
    p.bindVarchar(1, arg);
    return String((await p.runAndReadAll()).getRows()[0]?.[0] ?? '');
  };
  return {
    serialize: (query) => one('SELECT json_serialize_sql($1::VARCHAR)', query),
    deserialize: (ast) => one('SELECT json_deserialize_sql($1::JSON)', ast),
  };
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
    for (const ddl of STORED_DDL) await ingestion.run(ddl);
    return new AnalyticsDatabase(instance, ingestion, options.region);
  }

  /** A connection of its own (a query's: interrupting it stops only that query). */
  connect(): Promise<DuckDBConnection> {
    return this.instance.connect();
  }

  /**
   * Writes a batch of event lines (native eventsDrain) and its rollups in one transaction. Returns the rows written (a multiLimit's limits are one each).
   */
  async ingest(lines: string): Promise<number> {
    if (lines.length === 0) return 0;
    await this.ingestion.run('BEGIN TRANSACTION');
    try {
      for (const sql of INGEST) {
        const batch = await this.ingestion.prepare(sql);
        batch.bindVarchar(1, lines);
        if (sql.includes('$2')) batch.bindVarchar(2, this.region);
        await batch.run();
      }
      for (const sql of MOVE) await this.ingestion.run(sql);
      const rows = await this.ingestion.runAndReadAll('SELECT (SELECT count(*) FROM batch_verifications) + (SELECT count(*) FROM batch_ratelimits)');
      await this.ingestion.run('COMMIT');
      return Number(rows.getRows()[0]?.[0] ?? 0);
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
