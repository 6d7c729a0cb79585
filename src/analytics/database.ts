// The analytics database: DuckDB in the data dir (`analytics.duckdb`), opened by the
// analytics worker only (worker.ts). Events come in batches of JSON lines, as the engine
// buffered them (native/src/events.rs); the engine reads them into rows of the fields the
// tables keep (native/src/event_rows.rs), and DuckDB writes the batch into the raw tables
// in one transaction (one row per decision, a multiLimit's limits each); no JavaScript runs
// per event, only per dim a batch brings that the database had not stored (`storeDims`).
// The rollups are rolled up once each period is over (`roll`; schema.ts says how the public
// rollups stay exact meanwhile).
import { DuckDBInstance, INTEGER, LIST, VARCHAR, type DuckDBConnection, type DuckDBPreparedStatement, DuckDBDateValue, DuckDBListValue, DuckDBTimestampValue, DuckDBDecimalValue, type DuckDBValue } from '@duckdb/node-api';
import { CONNECTION_DDL, DIM_FIELDS, DIMS, EVENTS, FINER, GRAINS, rawRollupRows, rawRows, ROLLUP_GROUPS, rollupTime, STORED_DDL, MERGED_MEASURES, truncate, type Grain, type Kind } from './schema.js';
import type { SqlParser } from './dialect.js';
import { native, type EventRows } from '../engine/native.js';

export { DATABASE_FILE } from './protocol.js';

/**
 * How much write-ahead log DuckDB lets grow before it writes the tables' new rows into the
 * database file (a checkpoint). Each checkpoint compresses and writes the rows since the last
 * one, and costs more per event the more often it runs: at DuckDB's default (16 MB) it was
 * about 2 µs of CPU per event, at 64 MB under 1 µs (bench/HISTORY.md, 2026-11-29). What it
 * costs: after a kill -9 the next start replays up to this much log before analytics opens
 * (about 0.8 s for 64 MB on the benchmark VM).
 */
const CHECKPOINT_THRESHOLD = '64MB';

/** How a column of event_rows.rs's texts becomes a value of the raw table. */
type Field = 'text' | 'int' | 'bool' | 'micros' | 'tags' | 'dim';

/** The columns of each events table as event_rows.rs writes them, in its order, with the table's column each fills. */
const FIELDS: Record<Kind, readonly (readonly [column: string, field: Field])[]> = {
  verifications: [['request_id', 'text'], ['time', 'int'], ['dim', 'dim'], ['external_id', 'text'], ['key_id', 'text'], ['tags', 'tags'], ['spent_credits', 'int']],
  ratelimits: [['request_id', 'text'], ['time', 'int'], ['dim', 'dim'], ['identifier', 'text'], ['passed', 'bool'], ['latency', 'micros'], ['limit', 'int'], ['remaining', 'int'], ['reset_at', 'int'], ['tokens', 'int']],
};

/** How many fields of a dim event_rows.rs reads (DIM_FIELDS' first), the rest being the node's (`nodeFields`). */
const READ_DIM_FIELDS: Record<Kind, number> = { verifications: 3, ratelimits: 4 };

/** A text with event_rows.rs's escapes (%09 %0A %1F %00 %25) undone. */
const UNESCAPE = (x: string): string => `replace(replace(replace(replace(replace(${x}, '%09', chr(9)), '%0A', chr(10)), '%1F', chr(31)), '%00', chr(0)), '%25', '%')`;

/** Column `c` (SQL text) of a batch as its table's value; `escaped` when some value holds escapes. */
function value(c: string, field: Field, escaped: boolean): string {
  const text = (x: string): string => (escaped ? UNESCAPE(x) : x);
  switch (field) {
    case 'text':
      return text(c);
    case 'int':
      return `CAST(${c} AS BIGINT)`;
    case 'bool':
      return `${c} = '1'`;
    case 'micros':
      return `CAST(${c} AS BIGINT) / 1000.0`;
    case 'tags':
      return `CASE WHEN ${c} = '' THEN []::VARCHAR[] ELSE ${escaped ? `list_transform(string_split(${c}[2:], chr(31)), t -> ${text('t')})` : `string_split(${c}[2:], chr(31))`} END`;
    case 'dim':
      return `CAST(${c} AS INTEGER)`;
  }
}

/**
 * The SELECT of a batch's rows as the events table's (columns by name): parameter i+1 is
 * column i's text, split once and zipped with the others (DuckDB unnests the lists of one
 * SELECT side by side). Only casts per value: looking a row's dim up in a list bound beside
 * them tripled the statement's cost.
 */
function parse(kind: Kind, escaped: number): string {
  const fields = FIELDS[kind];
  const split = fields.map((_, i) => `unnest(string_split($${i + 1}, chr(10))) AS c${i}`).join(', ');
  const values = fields.map(([column, field], i) => `${value(`c${i}`, field, (escaped & (1 << i)) !== 0)} AS "${column}"`);
  return `SELECT ${values.join(', ')} FROM (SELECT ${split})`;
}

const KINDS: readonly Kind[] = ['verifications', 'ratelimits'];

/** How far behind the clock the rollups stay, so that an event still buffered is not late for its minute. */
const ROLL_MARGIN_MS = 5_000;

type Through = Record<Grain, number>;

/** The length of the periods of the grains whose periods are all alike. */
const PERIOD_MS = { minute: 60_000, hour: 3_600_000, day: 86_400_000 } as const;

/** The start of the UTC period of `grain` that `ms` falls in. */
export function floorTo(grain: Grain, ms: number): number {
  if (grain !== 'month') return Math.floor(ms / PERIOD_MS[grain]) * PERIOD_MS[grain];
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
}

/** The statement that stores `through` as rollup_state. */
function storeThrough(through: Through): string {
  return `INSERT OR REPLACE INTO rollup_state VALUES ${GRAINS.map((g) => `('${g}', ${through[g]})`).join(', ')}`;
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

/** Query connections kept idle between queries (AnalyticsDatabase.borrow). */
const IDLE_CONNECTIONS = 4;

export class AnalyticsDatabase {
  /** Query connections no query uses now, with their macros made. */
  private readonly idle: DuckDBConnection[] = [];
  /** The prepared INSERTs of batches, by table and escaped columns (insertOf). */
  private readonly inserts = new Map<string, DuckDBPreparedStatement>();

  private constructor(
    private readonly instance: DuckDBInstance,
    private readonly ingestion: DuckDBConnection,
    /** The dim fields every verification of this node has (DIM_FIELDS): region, source, app id. */
    private readonly nodeFields: Record<Kind, readonly string[]>,
    /** The engine's handle to this database's dims (native eventDimsOpen): which it stored, under which id. */
    private readonly dims: number,
    /** rollup_state as committed. */
    private through: Through,
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
      checkpoint_threshold: CHECKPOINT_THRESHOLD,
    });
    const ingestion = await connectTo(instance);
    for (const ddl of STORED_DDL) await ingestion.run(ddl);
    await moveOldRawTables(ingestion);
    const nodeFields = { verifications: [options.region, 'api', ''], ratelimits: [] };
    const dims = await openDims(ingestion, nodeFields);
    return new AnalyticsDatabase(instance, ingestion, nodeFields, dims, await startingThrough(ingestion, Date.now()));
  }

  /**
   * A connection for one query at a time (interrupting it stops only that query): an idle
   * one kept from an earlier query, else a new one. Making one costs 1–2 ms, its macros
   * (CONNECTION_DDL) most of it, against a few ms for a whole small query.
   */
  borrow(): Promise<DuckDBConnection> {
    const idle = this.idle.pop();
    return idle === undefined ? connectTo(this.instance) : Promise.resolve(idle);
  }

  /**
   * The query on `con` is over: kept for the next one (up to IDLE_CONNECTIONS), or closed.
   * `reusable` false (a query that was interrupted): closed. What a query can leave behind
   * on its connection is nothing: the dialect lets only one read-only SELECT through.
   */
  giveBack(con: DuckDBConnection, reusable: boolean): void {
    if (reusable && this.idle.length < IDLE_CONNECTIONS) this.idle.push(con);
    else con.closeSync();
  }

  /** Writes a batch of event lines as the engine buffers them (native/src/events.rs); see ingestRows. */
  ingest(lines: Buffer): Promise<{ written: number; unread: number }> {
    return this.ingestRows(this.read(lines));
  }

  /** A batch of event lines read into rows for this database (its dims' ids), for ingestRows. */
  read(lines: Buffer): EventRows {
    return native.eventsRows(lines, this.dims);
  }

  /** Every event the engine buffered, read into rows for this database, for ingestRows. */
  take(): EventRows {
    return native.eventsTake(this.dims);
  }

  /**
   * Writes a batch of events (`read` or `take`, the last one read) in one transaction, with
   * the dims it numbered: the rows written (a multiLimit's limits are one each), and the
   * lines that were not events (none, unless the buffer was damaged). Rows go to the raw
   * tables only, unless some are older than a rollup's `through` (late): those are added to
   * that rollup too.
   */
  async ingestRows(rows: EventRows): Promise<{ written: number; unread: number }> {
    const written = rows.verifications.rows + rows.ratelimits.rows;
    if (written === 0) {
      // Dims of lines that gave no row are not stored: numbered again when they come with one.
      native.eventDimsForget(this.dims);
      return { written, unread: rows.unread };
    }
    const late = rows.minTimeMs < this.through.minute;
    await this.transaction(async () => {
      for (const kind of KINDS) {
        const batch = rows[kind];
        await this.storeDims(kind, batch.dims, batch.dimIds);
        if (batch.rows === 0) continue;
        const statement = late ? await this.ingestion.prepare(`CREATE OR REPLACE TEMP TABLE batch AS ${parse(kind, batch.escaped)}`) : await this.insertOf(kind, batch.escaped);
        batch.columns.forEach((text, i) => statement.bindVarchar(i + 1, text));
        await statement.run();
        if (!late) continue;
        await this.ingestion.run(`INSERT INTO ${EVENTS[kind]} BY NAME SELECT * FROM batch`);
        for (const g of GRAINS) {
          await this.ingestion.run(`INSERT INTO ${kind}_rollup_${g} ${rawRollupRows(kind, g, rawRows(kind, { events: 'batch', when: `time < ${this.through[g]}` }))}`);
        }
      }
    }).catch((err: unknown) => {
      // Whatever failed, the next batch prepares its INSERT anew rather than trust these, and
      // numbers again the dims this one would have stored.
      this.forgetInserts();
      native.eventDimsForget(this.dims);
      throw err;
    });
    return { written, unread: rows.unread };
  }

  /** Stores, inside the caller's transaction, the dims a batch numbered (EventColumns.dims and .dimIds), with this node's fields. */
  private async storeDims(kind: Kind, fields: readonly string[], ids: readonly number[]): Promise<void> {
    if (ids.length === 0) return;
    const width = READ_DIM_FIELDS[kind];
    const columns: string[][] = DIM_FIELDS[kind].map(() => []);
    ids.forEach((_, n) => [...fields.slice(n * width, (n + 1) * width), ...this.nodeFields[kind]].forEach((f, i) => columns[i]?.push(f)));
    const insert = await this.ingestion.prepare(`INSERT INTO ${DIMS[kind]} SELECT unnest($1) AS id, ${DIM_FIELDS[kind].map((c, i) => `unnest($${i + 2}) AS ${c}`).join(', ')}`);
    try {
      insert.bindList(1, [...ids], LIST(INTEGER));
      columns.forEach((values, i) => insert.bindList(i + 2, values, LIST(VARCHAR)));
      await insert.run();
    } finally {
      insert.destroySync();
    }
  }

  /**
   * The INSERT of a batch of `kind` whose columns `escaped` says hold escapes, prepared once
   * and kept: preparing it was half of what a batch costs beside its rows (about 1 ms).
   */
  private async insertOf(kind: Kind, escaped: number): Promise<DuckDBPreparedStatement> {
    const key = `${kind} ${escaped}`;
    let statement = this.inserts.get(key);
    if (statement === undefined) {
      statement = await this.ingestion.prepare(`INSERT INTO ${EVENTS[kind]} BY NAME ${parse(kind, escaped)}`);
      this.inserts.set(key, statement);
    }
    return statement;
  }

  private forgetInserts(): void {
    for (const statement of this.inserts.values()) statement.destroySync();
    this.inserts.clear();
  }

  /**
   * Rolls the rollups up to the minute that ended ROLL_MARGIN_MS before `nowMs`, in one
   * transaction: the raw rows of the minutes since into minute rows, and, for each coarser
   * grain whose period ended, the finer rows of that period into its rows. Nothing when no
   * minute ended since the last roll.
   */
  async roll(nowMs: number): Promise<void> {
    const was = this.through;
    const minute = floorTo('minute', nowMs - ROLL_MARGIN_MS);
    if (minute <= was.minute) return;
    const hour = Math.max(was.hour, floorTo('hour', minute));
    const day = Math.max(was.day, floorTo('day', hour));
    const next: Through = { minute, hour, day, month: Math.max(was.month, floorTo('month', day)) };
    await this.transaction(async () => {
      for (const kind of KINDS) {
        await this.ingestion.run(`INSERT INTO ${kind}_rollup_minute ${rawRollupRows(kind, 'minute', rawRows(kind, { when: `time >= ${was.minute} AND time < ${minute}` }))}`);
        for (const g of ['hour', 'day', 'month'] as const) {
          if (next[g] === was[g]) continue;
          const finer = FINER[g];
          const range = `time >= ${rollupTime(finer, String(was[g]))} AND time < ${rollupTime(finer, String(next[g]))}`;
          await this.ingestion.run(`INSERT INTO ${kind}_rollup_${g} SELECT ${truncate(g)}, ${ROLLUP_GROUPS[kind]}, ${MERGED_MEASURES(kind)} FROM ${kind}_rollup_${finer} WHERE ${range} GROUP BY ALL`);
        }
      }
      await this.ingestion.run(storeThrough(next));
    });
    this.through = next;
  }

  private async transaction(work: () => Promise<void>): Promise<void> {
    await this.ingestion.run('BEGIN TRANSACTION');
    try {
      await work();
      await this.ingestion.run('COMMIT');
    } catch (err) {
      await this.ingestion.run('ROLLBACK').catch(() => undefined);
      throw err;
    }
  }

  /** Deletes what is older than each table keeps: raw rows after `rawDays`, rollups after ROLLUP_RETENTION_DAYS (rolled up first). */
  async retain(nowMs: number, rawDays: number): Promise<void> {
    await this.roll(nowMs);
    const before = (days: number): number => nowMs - days * 86_400_000;
    for (const kind of KINDS) await this.ingestion.run(`DELETE FROM ${EVENTS[kind]} WHERE time < ${before(rawDays)}`);
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
    native.eventDimsClose(this.dims);
    this.forgetInserts();
    for (const con of this.idle.splice(0)) con.closeSync();
    this.ingestion.closeSync();
    this.instance.closeSync();
  }
}

/** A connection to `instance`, with the macros every connection has (schema.ts CONNECTION_DDL). */
async function connectTo(instance: DuckDBInstance): Promise<DuckDBConnection> {
  const con = await instance.connect();
  for (const ddl of CONNECTION_DDL) await con.run(ddl);
  return con;
}

/**
 * The engine's handle to the database's dims (native eventDimsOpen), knowing those stored
 * with this node's fields (`nodeFields`; a dim of another region is not this node's), each
 * table's next id after every id stored.
 */
async function openDims(con: DuckDBConnection, nodeFields: Record<Kind, readonly string[]>): Promise<number> {
  const stored = await Promise.all(KINDS.map(async (kind) => (await con.runAndReadAll(`SELECT id, ${DIM_FIELDS[kind].join(', ')} FROM ${DIMS[kind]}`)).getRows()));
  const next = stored.map((rows) => rows.reduce((most, [id]) => Math.max(most, Number(id) + 1), 0));
  const dims = native.eventDimsOpen(next[0] ?? 0, next[1] ?? 0);
  KINDS.forEach((kind, table) => {
    const width = READ_DIM_FIELDS[kind];
    const records: Buffer[] = [];
    for (const [id, ...values] of stored[table] ?? []) {
      const fields = values.map(String);
      if (fields.slice(width).some((f, i) => f !== nodeFields[kind][i])) continue;
      records.push(u32(Number(id)), ...fields.slice(0, width).flatMap((f) => [u32(Buffer.byteLength(f)), Buffer.from(f)]));
    }
    native.eventDimsLearn(dims, table, width, Buffer.concat(records));
  });
  return dims;
}

function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n);
  return b;
}

/**
 * The raw tables of a database written before dims (`verifications`, `ratelimits`: every
 * field as text in every row), moved into the events and dims tables, each in one
 * transaction (a kill -9 before its COMMIT leaves it as it was, moved at the next open), then
 * written into the database file.
 */
export async function moveOldRawTables(con: DuckDBConnection): Promise<void> {
  const old = (await con.runAndReadAll("SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() AND schema_name = 'main' AND table_name IN ('verifications', 'ratelimits')")).getRows().map(([t]) => String(t) as Kind);
  for (const kind of old) {
    const fields = DIM_FIELDS[kind].join(', ');
    const columns = FIELDS[kind].map(([c]) => (c === 'dim' ? 'd.id AS dim' : `o."${c}"`)).join(', ');
    await con.run('BEGIN TRANSACTION');
    try {
      await con.run(`INSERT INTO ${DIMS[kind]} SELECT (SELECT coalesce(max(id), -1) FROM ${DIMS[kind]}) + row_number() OVER (), * FROM (SELECT DISTINCT ${fields} FROM ${kind} EXCEPT SELECT ${fields} FROM ${DIMS[kind]})`);
      await con.run(`INSERT INTO ${EVENTS[kind]} BY NAME SELECT ${columns} FROM ${kind} AS o JOIN ${DIMS[kind]} AS d USING (${fields})`);
      await con.run(`DROP TABLE ${kind}`);
      await con.run('COMMIT');
    } catch (err) {
      await con.run('ROLLBACK').catch(() => undefined);
      throw err;
    }
  }
  if (old.length > 0) await con.run('CHECKPOINT');
}

/**
 * rollup_state as stored; when it is not (a new database, or one written before rollups
 * were rolled by period, whose rollups hold every event it has), it starts here: at 0 for
 * an empty database, else at the next minute, hour and day boundaries (each grain's
 * `through` on a boundary of the finer one's periods), later events reaching each rollup
 * as late ones until then.
 */
async function startingThrough(con: DuckDBConnection, nowMs: number): Promise<Through> {
  const stored = (await con.runAndReadAll('SELECT grain, through FROM rollup_state')).getRows();
  if (stored.length === GRAINS.length) return Object.fromEntries(stored.map(([g, t]) => [String(g), Number(t)])) as Through;
  const tables = KINDS.flatMap((k) => [EVENTS[k], ...GRAINS.map((g) => `${k}_rollup_${g}`)]);
  const counts = await con.runAndReadAll(`SELECT ${tables.map((t) => `(SELECT count(*) FROM ${t})`).join(' + ')}`);
  const empty = Number(counts.getRows()[0]?.[0] ?? 0) === 0;
  const next = (grain: keyof typeof PERIOD_MS): number => (empty ? 0 : floorTo(grain, nowMs) + PERIOD_MS[grain]);
  const through: Through = { minute: next('minute'), hour: next('minute'), day: next('hour'), month: next('day') };
  await con.run(storeThrough(through));
  return through;
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

/**
 * A DateTime as ClickHouse prints it, `YYYY-MM-DD hh:mm:ss`, with its milliseconds when it
 * has any (a DateTime64(3): now64(), fromUnixTimestamp64Milli); DuckDB's infinities as text.
 */
function clickHouseDateTime(ms: number): string {
  const date = new Date(ms);
  if (Number.isNaN(date.getTime())) return ms > 0 ? 'infinity' : '-infinity';
  const text = date.toISOString().replace('T', ' ');
  return ms % 1000 === 0 ? text.slice(0, 19) : text.slice(0, 23);
}
