// The analytics worker (docs/analytics.md): one worker thread per process owns the DuckDB
// database. Every INGEST_MS it takes the events the engine buffered (native eventsTake,
// shared by every thread of the process) and writes them; it answers the analytics queries
// the serving threads post to it (host.ts), each on a connection no other query uses
// meanwhile, within the limits. Nothing here runs on a serving thread.
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import type { DuckDBConnection } from '@duckdb/node-api';
import { join } from 'node:path';
import { native } from '../engine/native.js';
import { ApiError } from '../errors/apiError.js';
import { invalidAnalyticsQuery, queryExecutionTimeout, queryMemoryLimitExceeded, queryQuotaExceeded, queryRowsLimitExceeded, queryRowsReadExceeded, shuttingDown, transportedError } from '../errors/errors.js';
import { AnalyticsDatabase, DATABASE_FILE, jsonValue, sqlParser } from './database.js';
import { PublicViews, translate } from './dialect.js';
import { estimateRows } from './plan.js';
import { splitFill, withFill } from './fill.js';
import { STAT, type AnalyticsSettings, type QueryReply, type QueryRequest, type WorkerMessage } from './protocol.js';

const settings = (workerData as { settings: AnalyticsSettings }).settings;
const stats = new Float64Array((workerData as { stats: SharedArrayBuffer }).stats);

/**
 * How often the buffered events are written (one DuckDB transaction each): well inside the
 * 2 s within which an event is queryable, and a kill -9 loses at most this much of them.
 * Shorter batches cost no more CPU per event (a batch's own cost is a few ms).
 */
const INGEST_MS = 250;
/** DuckDB's threads: one; the serving threads keep the cores. */
const DUCKDB_THREADS = 1;

/**
 * The threads of libuv's pool, as Node sizes it (UV_THREADPOOL_SIZE, 4 by default, 1024 at
 * most): DuckDB's work runs on them.
 */
function poolThreads(): number {
  const n = Math.floor(Number(process.env.UV_THREADPOOL_SIZE));
  return n > 0 ? Math.min(n, 1_024) : 4;
}

// Serving first (KEYWARD_ANALYTICS_PRIORITY=idle; native/src/priority.rs): this thread,
// which reads the engine's events, and libuv's pool, where DuckDB writes them and runs
// queries, go to the governor before DuckDB starts using the pool. It keeps them at
// SCHED_IDLE (only CPU the serving threads leave) unless a query runs or events wait over a
// second. The pool is the whole process's, but no serving thread uses it (only DNS lookups of
// cluster connections).
if (settings.priority === 'idle') governThreads();

function governThreads(): void {
  const threads = [native.threadId(), ...native.poolThreadIds(poolThreads())];
  const governed = threads.filter((tid) => native.governAnalytics(tid)).length;
  if (governed === 0) {
    parentPort?.postMessage({ type: 'log', level: 'warn', msg: 'analytics: runs at normal priority: this process may not take a thread back up from idle priority (needs root, CAP_SYS_NICE or `ulimit -e 20`); set KEYWARD_ANALYTICS_PRIORITY=normal to say so', fields: {} } satisfies WorkerMessage);
  }
}

const db = await AnalyticsDatabase.open(join(settings.dataDir, DATABASE_FILE), { memoryLimit: `${settings.memoryMb}MB`, threads: DUCKDB_THREADS, region: settings.region });
// ── ingestion ────────────────────────────────────────────────────────────────────────

let ingesting: Promise<void> = Promise.resolve();

/** Writes what the engine buffered; one batch at a time. */
function ingest(): Promise<void> {
  ingesting = ingesting.then(async () => {
    await db.roll(Date.now()).catch((err: unknown) => {
      port0.postMessage({ type: 'log', level: 'warn', msg: 'analytics: rolling up the rollups failed; the next tick tries again', fields: { error: (err as Error).message } } satisfies WorkerMessage);
    });
    const rows = db.take();
    const { unread, minTimeMs: oldest } = rows;
    const lines = rows.verifications.rows + rows.ratelimits.rows + unread;
    if (lines === 0) return;
    try {
      const { written } = await db.ingestRows(rows);
      stats[STAT.written] = (stats[STAT.written] ?? 0) + written;
      stats[STAT.failed] = (stats[STAT.failed] ?? 0) + unread;
    } catch (err) {
      // DuckDB refused the batch (its disk full, say): the batch is lost and counted.
      stats[STAT.failed] = (stats[STAT.failed] ?? 0) + lines;
      port0.postMessage({ type: 'log', level: 'warn', msg: 'analytics: a batch of events could not be written', fields: { events: lines, error: (err as Error).message } } satisfies WorkerMessage);
    }
    if (Number.isFinite(oldest)) stats[STAT.lagMs] = Date.now() - oldest;
  });
  return ingesting;
}

async function retain(): Promise<void> {
  await (ingesting = ingesting.then(() => db.retain(Date.now(), settings.retentionDays)).catch(() => undefined));
}

// ── queries ──────────────────────────────────────────────────────────────────────────

/** The public tables' parsed SELECTs of the scopes queried lately (dialect.ts). */
const views = new PublicViews();

/**
 * Queries that run at once: DuckDB runs each statement on a thread of libuv's pool, and one
 * stays free for ingestion, whatever the queries take. The others wait for a slot, within
 * their timeout.
 */
const QUERY_SLOTS = Math.max(1, poolThreads() - 1);
let freeSlots = QUERY_SLOTS;
const waitingForSlot: { take: () => void; refuse: (err: ApiError) => void }[] = [];
/** The connections running a query now: interrupted at stop. */
const busy = new Set<DuckDBConnection>();
/** The queries being answered now: stop waits for them. */
const answering = new Set<Promise<unknown>>();
let stopping = false;

/** A slot to run a query in, waited for at most `timeoutMs` (then 422, as a query that ran that long). */
function takeSlot(timeoutMs: number): Promise<void> {
  if (freeSlots > 0) {
    freeSlots--;
    return Promise.resolve();
  }
  return new Promise((resolve, reject) => {
    const waiter = {
      take: () => {
        clearTimeout(timer);
        resolve();
      },
      refuse: (err: ApiError) => {
        clearTimeout(timer);
        reject(err);
      },
    };
    const timer = setTimeout(() => {
      waitingForSlot.splice(waitingForSlot.indexOf(waiter), 1);
      reject(queryExecutionTimeout(settings.queryTimeoutMs));
    }, timeoutMs);
    waitingForSlot.push(waiter);
  });
}

function giveSlot(): void {
  const next = waitingForSlot.shift();
  if (next === undefined) freeSlots++;
  else next.take();
}

/** Queries per root key in the current hour (query_quota_exceeded beyond settings.queriesPerHour). */
const quota = new Map<string, { hour: number; used: number }>();

function takeQuota(rootKeyId: string, nowMs: number): void {
  const hour = Math.floor(nowMs / 3_600_000);
  const q = quota.get(rootKeyId);
  if (q === undefined || q.hour !== hour) quota.set(rootKeyId, { hour, used: 1 });
  else if (++q.used > settings.queriesPerHour) throw queryQuotaExceeded(settings.queriesPerHour);
  if (quota.size > 10_000) for (const [k, v] of quota) if (v.hour !== hour) quota.delete(k);
}

/** The rows of a query, or the ApiError that refused it (as data: it crosses a MessagePort). */
function query(req: QueryRequest): Promise<QueryReply> {
  const answer = answerQuery(req);
  answering.add(answer);
  void answer.finally(() => answering.delete(answer));
  return answer;
}

async function answerQuery(req: QueryRequest): Promise<QueryReply> {
  try {
    if (stopping) throw shuttingDown();
    const arrived = Date.now();
    takeQuota(req.rootKeyId, arrived);
    await takeSlot(settings.queryTimeoutMs);
    try {
      return { id: req.id, rows: await runOnConnection(req, settings.queryTimeoutMs - (Date.now() - arrived)) };
    } finally {
      giveSlot();
    }
  } catch (err) {
    const refusal = err instanceof ApiError ? err : invalidAnalyticsQuery((err as Error).message.slice(0, 500));
    return { id: req.id, error: transportedError(refusal) };
  }
}

/** The rows of `req`, run on a connection of its own for at most `timeoutMs`. */
async function runOnConnection(req: QueryRequest, timeoutMs: number): Promise<Record<string, unknown>[]> {
  // One query at a time on a connection: parsed and run on it, and interrupting it stops only this query.
  const con = await db.borrow();
  busy.add(con);
  const timer = { timedOut: false };
  try {
    const parser = sqlParser(con);
    const split = splitFill(req.query);
    const prepare = async (): Promise<string> => {
      if (split === undefined) return translate(req.query, req.scope, parser, views);
      // ORDER BY … WITH FILL (fill.ts): the query without it, checked before withFill reads it, then filled.
      const inner = await translate(split.query, req.scope, parser, views);
      await withinRowsRead(con, inner);
      return withFill(con, inner, split.fill, (select) => translate(select, req.scope, parser, views), settings.maxRows);
    };
    return await run(con, prepare, timer, timeoutMs);
  } finally {
    busy.delete(con);
    // A connection interrupted (by the timer, or at stop) is not kept, whether or not its query failed of it.
    db.giveBack(con, !timer.timedOut && !stopping);
  }
}

/** 422 when the plan of `sql` goes through more rows than a query may read. */
async function withinRowsRead(con: DuckDBConnection, sql: string): Promise<void> {
  const through = await estimateRows(con, sql);
  if (through > settings.maxRowsRead) throw queryRowsReadExceeded(through, settings.maxRowsRead);
}

/**
 * Runs the SQL `prepare` translates on `con`: refused when its plan goes through too many
 * rows, stopped (preparing included) after `timeoutMs`, which sets `timer.timedOut`.
 */
async function run(con: DuckDBConnection, prepare: () => Promise<string>, timer: { timedOut: boolean }, timeoutMs: number): Promise<Record<string, unknown>[]> {
  const timeout = setTimeout(() => {
    timer.timedOut = true;
    con.interrupt();
  }, Math.max(0, timeoutMs));
  try {
    const sql = await prepare();
    await withinRowsRead(con, sql);
    const reader = await con.runAndReadAll(sql);
    if (reader.currentRowCount > settings.maxRows) throw queryRowsLimitExceeded(reader.currentRowCount, settings.maxRows);
    const names = reader.columnNames();
    return reader.getRows().map((row) => Object.fromEntries(row.map((v, i) => [names[i] as string, jsonValue(v)])));
  } catch (err) {
    if (err instanceof ApiError) throw err;
    const message = (err as Error).message;
    if (stopping && !timer.timedOut) throw shuttingDown();
    if (timer.timedOut || /INTERRUPT/i.test(message)) throw queryExecutionTimeout(settings.queryTimeoutMs);
    if (/out of memory/i.test(message)) throw queryMemoryLimitExceeded(settings.memoryMb);
    // What DuckDB refuses once the dialect let it through: a column that does not exist, a type mismatch.
    throw invalidAnalyticsQuery(message.replace(/\s+/g, ' ').slice(0, 500));
  } finally {
    clearTimeout(timeout);
  }
}

function serve(port: MessagePort): void {
  port.on('message', (msg: WorkerMessage) => {
    if (msg.type === 'query') void query(msg.request).then((reply) => port.postMessage({ type: 'reply', reply } satisfies WorkerMessage));
    else if (msg.type === 'port') serve(msg.port);
    else if (msg.type === 'quiesce') quiesce();
    else if (msg.type === 'stop') void stop();
  });
}

/** No more queries: those waiting are refused, those running interrupted (each answers 503 shutting_down). */
function quiesce(): void {
  stopping = true;
  for (const waiter of waitingForSlot.splice(0)) waiter.refuse(shuttingDown());
  for (const con of busy) con.interrupt();
}

/** How long stop waits for the queries it interrupted to end. */
const STOP_QUERIES_MS = 3_000;

/**
 * SIGTERM (host.ts), once the server drained: queries quiesced (if the host did not already),
 * then what is buffered is written (a pool thread is free for it: QUERY_SLOTS)
 * and the database checkpointed and closed. A query that does not end when interrupted keeps
 * its connection: the database is then left to the process's exit, its WAL replayed at the
 * next start, and no event is lost either way.
 */
async function stop(): Promise<void> {
  quiesce();
  clearInterval(ingestTimer);
  clearInterval(retainTimer);
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([Promise.allSettled(answering), new Promise((resolve) => (timer = setTimeout(resolve, STOP_QUERIES_MS)))]);
  clearTimeout(timer);
  await ingest();
  await db.checkpoint().catch(() => undefined);
  if (busy.size === 0) db.close();
  port0.postMessage({ type: 'stopped' } satisfies WorkerMessage);
}

const port0 = parentPort as unknown as MessagePort;
serve(port0);
const ingestTimer = setInterval(() => void ingest(), INGEST_MS);
const retainTimer = setInterval(() => void retain(), 3_600_000);
void retain();
port0.postMessage({ type: 'ready' } satisfies WorkerMessage);
