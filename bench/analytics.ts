// Analytics capacity (docs/analytics.md): how fast the analytics database takes events, what
// an event costs on disk, and how long documented queries take over many events.
// Events are written as the engine buffers them (JSON lines, native/src/events.rs) straight
// into the database the worker uses (src/analytics/database.ts), in batches, without a server,
// then rolled up: the figures are the engine's reading of the lines, DuckDB's and the
// database code's, the same work the worker does.
//   npm run bench:analytics [-- --events 10000000 --batch 50000]
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { AnalyticsDatabase, DATABASE_FILE, jsonValue, sqlParser } from '../src/analytics/database.js';
import { translate, type Scope } from '../src/analytics/dialect.js';
import { benchTempDir } from './lib/procs.js';
import { arg, median } from './lib/report.js';

const events = arg('events', 10_000_000);
const batchSize = arg('batch', 50_000);

const dir = benchTempDir('keyward-bench-analytics-');
const db = await AnalyticsDatabase.open(join(dir, DATABASE_FILE), { memoryLimit: '2048MB', threads: 1, region: 'local' });

const WORKSPACE = 'ws_bench';
const APIS = 10;
const KEYS = 10_000;
const CUSTOMERS = 1_000;
const OUTCOMES = ['VALID', 'VALID', 'VALID', 'VALID', 'VALID', 'VALID', 'VALID', 'RATE_LIMITED', 'USAGE_EXCEEDED', 'NOT_FOUND'];
const TAGS = ['[]', '["path=/v1/a"]', '["path=/v1/b","region=eu"]'];
const DAY = 86_400_000;
const now = Date.now();

/** Event i, as the engine writes it: 90% verifications, 10% rate-limit decisions, in time order over the last 30 days (as a node records them). */
function line(i: number): string {
  const t = now - 30 * DAY + Math.floor((i / events) * 30 * DAY);
  const head = `{"k":${i % 10 === 9 ? 2 : 1},"t":${t},"l":12,"w":"${WORKSPACE}","r":"req_${i.toString(36)}"`;
  if (i % 10 === 9) {
    const passed = i % 7 !== 0;
    return `${head},"s":"rlns_${i % 5}","b":{"namespace":"api","identifier":"user_${i % CUSTOMERS}","limit":100,"duration":60000},"p":{"meta":{"requestId":"req_${i.toString(36)}"},"data":{"success":${passed},"limit":100,"remaining":${passed ? 50 : 0},"reset":${t + 60_000}}}}`;
  }
  const key = i % KEYS;
  const outcome = OUTCOMES[Math.floor(i / 10) % OUTCOMES.length] as string;
  const api = `api_${key % APIS}`;
  const reply = outcome === 'NOT_FOUND' ? `{"valid":false,"code":"NOT_FOUND"}` : `{"valid":${outcome === 'VALID'},"code":"${outcome}","keyId":"key_${key}","credits":${1_000 - (i % 1_000)},"enabled":true,"identity":{"id":"id_${key % CUSTOMERS}","externalId":"cust_${key % CUSTOMERS}"}}`;
  return `${head},"s":"${outcome === 'NOT_FOUND' ? '' : api}","b":{"key":"sk_${key}","tags":${TAGS[i % TAGS.length]}},"p":{"meta":{"requestId":"req_${i.toString(36)}"},"data":${reply}}}`;
}

process.stderr.write(`analytics: writing ${events.toLocaleString('en-US')} events in batches of ${batchSize.toLocaleString('en-US')}…\n`);
let ingestS = 0;
let cpuS = 0;
let written = 0;
for (let from = 0; from < events; from += batchSize) {
  const lines: string[] = [];
  for (let i = from; i < Math.min(events, from + batchSize); i++) lines.push(line(i));
  const text = lines.join('\n') + '\n';
  const cpu = process.cpuUsage();
  const t = performance.now();
  written += (await db.ingest(Buffer.from(text))).written;
  ingestS += (performance.now() - t) / 1000;
  const used = process.cpuUsage(cpu);
  cpuS += (used.user + used.system) / 1e6;
  if ((from / batchSize) % 20 === 0) process.stderr.write(`  ${(from + lines.length).toLocaleString('en-US')}\r`);
}
// The rollups, as the worker rolls them once each minute is over: here every period of the 30 days at once.
const rollCpu = process.cpuUsage();
const rollStarted = performance.now();
await db.roll(Date.now());
const rollS = (performance.now() - rollStarted) / 1000;
const rollUsed = process.cpuUsage(rollCpu);
const rollCpuS = (rollUsed.user + rollUsed.system) / 1e6;
await db.checkpoint();
const bytes = readdirSync(dir).reduce((sum, f) => sum + statSync(join(dir, f)).size, 0);

// Five queries of Unkey's docs (query examples, quick reference), through the dialect, as a root key of the workspace runs them.
const QUERIES: [string, Scope['kind'], string][] = [
  ['verifications by outcome, last 30 days (raw)', 'verifications', `SELECT outcome, count(*) AS total FROM key_verifications_v1 WHERE time >= now() - INTERVAL 30 DAY GROUP BY outcome ORDER BY total DESC`],
  ['usage per customer, last 30 days (per day)', 'verifications', `SELECT external_id, sum(count) AS total, sumIf(count, outcome = 'VALID') AS valid FROM key_verifications_per_day_v1 WHERE time >= now() - INTERVAL 30 DAY AND external_id != '' GROUP BY external_id ORDER BY total DESC LIMIT 100`],
  ['one API per hour, last 7 days (per hour)', 'verifications', `SELECT time, sum(count) AS total FROM key_verifications_per_hour_v1 WHERE key_space_id = 'api_3' AND time >= now() - INTERVAL 7 DAY GROUP BY time ORDER BY time`],
  ['top keys by valid verifications, with tags (raw)', 'verifications', `SELECT key_id, countIf(outcome = 'VALID') AS valid, countIf(has(tags, 'region=eu')) AS eu FROM key_verifications_v1 WHERE time >= now() - INTERVAL 30 DAY GROUP BY key_id ORDER BY valid DESC LIMIT 10`],
  ['rate-limit decisions per identifier, last 7 days (raw)', 'ratelimits', `SELECT identifier, countIf(passed) AS passed, countIf(NOT passed) AS blocked FROM ratelimits_v1 WHERE time >= toUnixTimestamp64Milli(now64(3) - INTERVAL 7 DAY) GROUP BY identifier ORDER BY blocked DESC LIMIT 50`],
];
const con: DuckDBConnection = await db.borrow();
const parser = sqlParser(con);
const timings: string[] = [];
for (const [name, kind, query] of QUERIES) {
  const sql = await translate(query, { workspaceId: WORKSPACE, kind }, parser);
  const runs: number[] = [];
  let rows = 0;
  for (let r = 0; r < 3; r++) {
    const t = performance.now();
    const reader = await con.runAndReadAll(sql);
    rows = reader.getRows().map((row) => row.map(jsonValue)).length;
    runs.push(performance.now() - t);
  }
  timings.push(`| ${name} | ${rows} | ${median(runs).toFixed(0)} |`);
}
db.giveBack(con, true);
db.close();

process.stdout.write(
  [
    `analytics database: ${events.toLocaleString('en-US')} events (90% verifications, 10% rate-limit decisions, over 30 days), batches of ${batchSize.toLocaleString('en-US')}, DuckDB on one thread`,
    '',
    `- ingestion: ${written.toLocaleString('en-US')} rows in ${ingestS.toFixed(1)} s → ${Math.round(written / ingestS).toLocaleString('en-US')} events/s; ${((cpuS * 1e6) / written).toFixed(1)} µs of CPU per event (this process: reading the lines into rows and the database's work)`,
    `- rolling up every minute, hour, day and month of them: ${rollS.toFixed(1)} s, ${((rollCpuS * 1e6) / written).toFixed(1)} µs of CPU per event`,
    `- on disk: ${(bytes / 1024 / 1024).toFixed(0)} MiB → ${(bytes / written).toFixed(1)} bytes per event (raw rows and all rollups)`,
    '',
    '| query (median of 3) | rows | ms |',
    '|---|---|---|',
    ...timings,
  ].join('\n') + '\n',
);
