// The analytics database's ingestion (src/analytics/database.ts over native/src/event_rows.rs):
// event lines as the engine buffers them become raw rows and rollups with every value as it
// was, whatever characters identifiers and tags hold; lines that are not events are counted.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DuckDBTimestampValue } from '@duckdb/node-api';
import { AnalyticsDatabase, DATABASE_FILE, jsonValue } from '../../src/analytics/database.js';
import { GRAINS, LATENCY_POINTS, publicSelect, rawRows } from '../../src/analytics/schema.js';

let dir = '';
let db: AnalyticsDatabase;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'keyward-ingest-'));
  db = await AnalyticsDatabase.open(join(dir, DATABASE_FILE), { memoryLimit: '256MB', threads: 1, region: 'eu-1' });
});

afterAll(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

async function rows(sql: string): Promise<Record<string, unknown>[]> {
  const con = await db.borrow();
  try {
    const reader = await con.runAndReadAll(sql);
    const names = reader.columnNames();
    return reader.getRows().map((row) => Object.fromEntries(row.map((v, i) => [names[i] as string, jsonValue(v)])));
  } finally {
    db.giveBack(con, true);
  }
}

const T = 1_764_300_000_000;
// Everything a text field must survive: separators, escapes, non-ASCII, a lone surrogate.
const AWKWARD = 'a\tb\nc\u001fd%25e\u0000f "q" \\ é 😀';

/** One event line as native/src/events.rs writes it. */
const line = (kind: number, request: string, subject: string, body: unknown, data: unknown, t = T): string =>
  JSON.stringify({ k: kind, t, l: 1500, w: 'ws_1', r: request, s: subject, b: body, p: { meta: { requestId: request }, data } });

/** Every public rollup of each grain: verifications by outcome ([count, spent credits]), and rate-limit [passed, total, passed tokens]. */
async function expectRollups(outcomes: Record<string, [number, number]>, limits: [number, number, number]): Promise<void> {
  const scope = `workspace_id = 'ws_1'`;
  for (const g of GRAINS) {
    const byOutcome = await rows(`SELECT outcome, sum(count)::BIGINT AS n, sum(spent_credits)::BIGINT AS spent FROM (${publicSelect(`key_verifications_per_${g}_v1`, scope)}) GROUP BY outcome`);
    expect(Object.fromEntries(byOutcome.map((r) => [r.outcome, [r.n, r.spent]])), g).toEqual(outcomes);
    const l = await rows(`SELECT sum(passed)::BIGINT AS p, sum(total)::BIGINT AS t, sum(passed_tokens)::BIGINT AS pt, kw_avg_merge(latency_avg) AS avg, kw_quantiles(latency_p99, [0.5, 0.99]) AS q FROM (${publicSelect(`ratelimits_per_${g}_v1`, scope)})`);
    expect([l[0]?.p, l[0]?.t, l[0]?.pt], g).toEqual(limits);
    // Every decision here took 1.5 ms (the lines' `l`): the latency states agree, rolled up or not.
    expect([l[0]?.avg, l[0]?.q], g).toEqual([1.5, [1.5, 1.5]]);
  }
}

describe('analytics ingestion', () => {
  it('writes verifications, limits and each limit of a multiLimit with every value intact; raw rows and rollups agree', async () => {
    const lines = [
      line(1, 'req_1', 'api_1', { key: 'sk_1', tags: [AWKWARD, 'path=/a', ''], credits: { cost: 4 } }, { valid: true, code: 'VALID', keyId: 'key_1', credits: 6, identity: { id: 'id_1', externalId: AWKWARD } }),
      line(1, 'req_2', 'api_1', { key: 'sk_1' }, { valid: false, code: 'USAGE_EXCEEDED', keyId: 'key_1', credits: 0 }),
      line(1, 'req_3', '', { key: 'sk_x', tags: [] }, { valid: false, code: 'NOT_FOUND' }),
      line(2, 'req_4', 'ns_1', { namespace: 'api', identifier: AWKWARD, limit: 10, duration: 1000, cost: 3 }, { success: true, limit: 10, remaining: 7, reset: T + 1000, overrideId: 'ovr_1' }),
      line(3, 'req_5', 'ns_1\nns_2', [{ namespace: 'api', identifier: 'u1', limit: 1, duration: 1000 }, { namespace: 'other', identifier: 'u2', limit: 1, duration: 1000 }], {
        passed: false,
        limits: [{ passed: true, limit: 1, remaining: 0, reset: T + 1000 }, { passed: false, limit: 1, remaining: 0, reset: T + 1000 }],
      }),
      'not an event',
    ];
    expect(await db.ingest(Buffer.from(lines.join('\n') + '\n'))).toEqual({ written: 6, unread: 1 });

    expect(await rows(`${rawRows('verifications')} ORDER BY request_id`)).toEqual([
      { request_id: 'req_1', time: T, workspace_id: 'ws_1', key_space_id: 'api_1', external_id: AWKWARD, key_id: 'key_1', outcome: 'VALID', region: 'eu-1', source: 'api', app_id: '', tags: [AWKWARD, 'path=/a', ''], spent_credits: 4 },
      { request_id: 'req_2', time: T, workspace_id: 'ws_1', key_space_id: 'api_1', external_id: '', key_id: 'key_1', outcome: 'USAGE_EXCEEDED', region: 'eu-1', source: 'api', app_id: '', tags: [], spent_credits: 0 },
      { request_id: 'req_3', time: T, workspace_id: 'ws_1', key_space_id: '', external_id: '', key_id: '', outcome: 'NOT_FOUND', region: 'eu-1', source: 'api', app_id: '', tags: [], spent_credits: 0 },
    ]);
    const ratelimits = 'SELECT e.*, d.* EXCLUDE (id) FROM ratelimit_events AS e JOIN ratelimit_dims AS d ON d.id = e.dim';
    expect(await rows(`SELECT request_id, namespace_id, namespace_name, identifier, passed, latency, override_id, "limit", remaining, reset_at, tokens FROM (${ratelimits}) ORDER BY request_id, namespace_id`)).toEqual([
      { request_id: 'req_4', namespace_id: 'ns_1', namespace_name: 'api', identifier: AWKWARD, passed: true, latency: 1.5, override_id: 'ovr_1', limit: 10, remaining: 7, reset_at: T + 1000, tokens: 3 },
      { request_id: 'req_5', namespace_id: 'ns_1', namespace_name: 'api', identifier: 'u1', passed: true, latency: 1.5, override_id: '', limit: 1, remaining: 0, reset_at: T + 1000, tokens: 1 },
      { request_id: 'req_5', namespace_id: 'ns_2', namespace_name: 'other', identifier: 'u2', passed: false, latency: 1.5, override_id: '', limit: 1, remaining: 0, reset_at: T + 1000, tokens: 1 },
    ]);
    await expectRollups({ VALID: [1, 4], USAGE_EXCEEDED: [1, 0], NOT_FOUND: [1, 0] }, [2, 3, 4]);
  });

  it('rolling up keeps every public rollup exact, and an event later than its rolled-up period still counts once', async () => {
    // Every period of T over: its rows move from the raw table into each grain's stored rows.
    await db.roll(T + 40 * 86_400_000);
    for (const g of GRAINS) expect((await rows(`SELECT count(*) AS n FROM verifications_rollup_${g}`))[0]?.n).toBe(3);
    await expectRollups({ VALID: [1, 4], USAGE_EXCEEDED: [1, 0], NOT_FOUND: [1, 0] }, [2, 3, 4]);
    // A verification and a limit decided at T arrive now: late for every grain.
    const late = [
      line(1, 'req_6', 'api_1', { key: 'sk_1', credits: { cost: 2 } }, { valid: true, code: 'VALID', keyId: 'key_1', credits: 4 }, T + 1),
      line(2, 'req_7', 'ns_1', { namespace: 'api', identifier: 'u3' }, { success: false, limit: 1, remaining: 0, reset: T + 1000 }, T + 2),
    ];
    expect(await db.ingest(Buffer.from(late.join('\n')))).toEqual({ written: 2, unread: 0 });
    await expectRollups({ VALID: [2, 6], USAGE_EXCEEDED: [1, 0], NOT_FOUND: [1, 0] }, [2, 4, 4]);
    // Rolling up again moves nothing twice.
    await db.roll(T + 80 * 86_400_000);
    await expectRollups({ VALID: [2, 6], USAGE_EXCEEDED: [1, 0], NOT_FOUND: [1, 0] }, [2, 4, 4]);
    expect((await rows('SELECT count(*) AS n FROM verification_events'))[0]?.n).toBe(4);
  });

  it('a rollup row of many decisions keeps evenly spaced quantiles of their latencies, close enough for a p99', async () => {
    const points = `SELECT kw_points(list(i::DOUBLE)) AS p FROM range(1, 1001) t(i)`;
    const [row] = await rows(`SELECT (SELECT len(p) FROM (${points})) AS n, kw_quantiles([{'p': p, 'n': 1000}], [0.5, 0.99]) AS q FROM (${points})`);
    expect(row?.n).toBe(LATENCY_POINTS);
    const [median, p99] = row?.q as number[];
    expect(Math.abs((median as number) - 500.5)).toBeLessThan(2);
    expect(Math.abs((p99 as number) - 990.01)).toBeLessThan(6);
  });

  it('rows pool their latencies by the decisions behind them: a quiet minute does not outweigh a busy one', async () => {
    const hour = T + 100 * 86_400_000;
    const decision = (i: number, t: number, latencyUs: number): string =>
      JSON.stringify({ k: 2, t, l: latencyUs, w: 'ws_w', r: `req_w${i}`, s: 'ns_w', b: { namespace: 'w', identifier: 'u', limit: 10, duration: 1000 }, p: { meta: { requestId: `req_w${i}` }, data: { success: true, limit: 10, remaining: 9, reset: t + 1000 } } });
    // A busy minute of 1,000 decisions at 1 ms (kept as 100 points), a quiet one of 50 at 9 ms (kept as they are).
    const lines = [...Array.from({ length: 1000 }, (_, i) => decision(i, hour + i, 1000)), ...Array.from({ length: 50 }, (_, i) => decision(1000 + i, hour + 60_000 + i, 9000))];
    expect(await db.ingest(Buffer.from(lines.join('\n')))).toEqual({ written: 1050, unread: 0 });
    // Of 1,050 decisions the slowest 50 are 4.8%: p75 and p90 are 1 ms, p99 is 9 ms (the 150 points pooled alike would put p75 at 9).
    const expected = [1, 1, 9];
    const quantiles = async (g: (typeof GRAINS)[number]): Promise<unknown> =>
      (await rows(`SELECT kw_quantiles(latency_p99, [0.75, 0.9, 0.99]) AS q FROM (${publicSelect(`ratelimits_per_${g}_v1`, `workspace_id = 'ws_w'`)})`))[0]?.q;
    for (const g of GRAINS) expect(await quantiles(g), `${g}, before rolling up`).toEqual(expected);
    await db.roll(hour + 40 * 86_400_000);
    for (const g of GRAINS) expect(await quantiles(g), `${g}, rolled up`).toEqual(expected);
    expect((await rows(`SELECT len(latency_points) AS n, latency_count AS c FROM ratelimits_rollup_hour WHERE workspace_id = 'ws_w'`))[0]).toEqual({ n: LATENCY_POINTS, c: 1050 });
  });

  it('prints a DateTime as ClickHouse does: to the second, with milliseconds when it has them (DateTime64); infinities as text', () => {
    expect(jsonValue(new DuckDBTimestampValue(1_795_981_655_000_000n))).toBe('2026-11-29 19:47:35');
    expect(jsonValue(new DuckDBTimestampValue(1_795_981_655_123_000n))).toBe('2026-11-29 19:47:35.123');
    expect(jsonValue(new DuckDBTimestampValue(9_223_372_036_854_775_807n))).toBe('infinity');
  });

  it('a batch DuckDB refuses writes none of its rows, and the next batch of the same shape is written', async () => {
    const limit = (request: string, limitField: string): string => line(2, request, 'ns_9', { namespace: 'n', identifier: 'u', limit: 1, duration: 1000 }, { success: true, limit: 1, remaining: 0, reset: T + 1000 }).replace('"limit":1,"remaining"', `"limit":${limitField},"remaining"`);
    const refused = db.read(Buffer.from(`${limit('req_refused_1', '1')}\n`));
    // A value no BIGINT holds (the engine never writes one): the whole batch is refused.
    refused.ratelimits.columns[6] = '99999999999999999999999';
    await expect(db.ingestRows(refused)).rejects.toThrow(/BIGINT|INT64|out of range|Conversion/i);
    expect(await db.ingest(Buffer.from(`${limit('req_after_1', '2')}\n`))).toEqual({ written: 1, unread: 0 });
    expect(await rows(`SELECT request_id, "limit" FROM (${rawRows('ratelimits', { scope: "namespace_id = 'ns_9'" })}) ORDER BY request_id`)).toEqual([{ request_id: 'req_after_1', limit: 2 }]);
  });

  it('an empty batch, or one of nothing but damaged lines, writes nothing', async () => {
    expect(await db.ingest(Buffer.alloc(0))).toEqual({ written: 0, unread: 0 });
    expect(await db.ingest(Buffer.from('{"k":1,"t":1,"b":{"tags":[\n{}\n\n'))).toEqual({ written: 0, unread: 2 });
  });
});

describe('analytics ingestion, killed', () => {
  it('after a kill -9, the next open replays DuckDB\'s log (the tables\' DDL and the batches) and finds every row; the raw text columns keep their compression', async () => {
    const crashDir = mkdtempSync(join(tmpdir(), 'keyward-ingest-kill-'));
    try {
      const path = join(crashDir, DATABASE_FILE);
      const lines: string[] = [];
      for (let i = 0; i < 300; i++) {
        lines.push(line(1, `req_v${i}`, `api_${i % 2}`, { key: 'sk_1' }, { valid: i % 3 !== 0, code: i % 3 === 0 ? 'DISABLED' : 'VALID', keyId: `key_${i % 7}` }, T + i));
        lines.push(line(2, `req_l${i}`, `ns_${i % 2}`, { namespace: `name_${i % 2}`, identifier: `user_${i}`, limit: 10, duration: 1000 }, { success: i % 2 === 0, limit: 10, remaining: 1, reset: T + 1000 }, T + i));
      }
      // A fresh database (its CREATE TABLEs in the log), two batches, then SIGKILL before any checkpoint.
      const root = resolve(import.meta.dirname, '../..');
      const child = spawnSync(
        process.execPath,
        [
          '--input-type=module',
          '-e',
          `const { AnalyticsDatabase } = await import(${JSON.stringify(join(root, 'dist/src/analytics/database.js'))});
           const db = await AnalyticsDatabase.open(${JSON.stringify(path)}, { memoryLimit: '256MB', threads: 1, region: 'eu-1' });
           const chunks = [];
           for await (const chunk of process.stdin) chunks.push(chunk);
           const lines = Buffer.concat(chunks).toString().split('\\n');
           for (const half of [lines.slice(0, 300), lines.slice(300)]) await db.ingest(Buffer.from(half.join('\\n') + '\\n'));
           process.kill(process.pid, 'SIGKILL');`,
        ],
        { encoding: 'utf8', input: lines.join('\n') },
      );
      expect(child.signal, `${String(child.error)} ${child.stderr}`).toBe('SIGKILL');
      expect(existsSync(`${path}.wal`), 'the rows are in the log only').toBe(true);

      const again = await AnalyticsDatabase.open(path, { memoryLimit: '256MB', threads: 1, region: 'eu-1' });
      try {
        const con = await again.borrow();
        try {
          const one = async (sql: string): Promise<unknown[]> => (await con.runAndReadAll(sql)).getRows().map((r) => r.map(jsonValue));
          expect(await one(`SELECT count(*), count(DISTINCT request_id), count(*) FILTER (WHERE outcome = 'VALID') FROM (${rawRows('verifications')})`)).toEqual([[300, 300, 200]]);
          expect(await one(`SELECT count(*), count(DISTINCT identifier), count(*) FILTER (WHERE passed) FROM (${rawRows('ratelimits')})`)).toEqual([[300, 300, 150]]);
          // Each distinct dim stored once: two key spaces × two outcomes, two namespaces.
          expect(await one('SELECT (SELECT count(*) FROM verification_dims), (SELECT count(*) FROM ratelimit_dims)')).toEqual([[4, 2]]);
          await con.run('CHECKPOINT');
          // As schema.ts declares them: FSST for request ids.
          const compression = async (table: string, column: string): Promise<unknown[]> => (await one(`SELECT DISTINCT compression FROM pragma_storage_info('${table}') WHERE column_name = '${column}' AND segment_type = 'VARCHAR'`)).flat();
          expect(await compression('ratelimit_events', 'request_id')).toEqual(['FSST']);
          expect(await compression('verification_events', 'request_id')).toEqual(['FSST']);
        } finally {
          again.giveBack(con, false);
        }
      } finally {
        again.close();
      }
    } finally {
      rmSync(crashDir, { recursive: true, force: true });
    }
  });
});

describe('analytics databases written before dims', () => {
  it('open with their raw rows moved into events and dims: every row and value as it was, the old tables gone, new events beside them', async () => {
    const oldDir = mkdtempSync(join(tmpdir(), 'keyward-ingest-old-'));
    try {
      const path = join(oldDir, DATABASE_FILE);
      // The raw tables as a build before dims created them (every field as text in every row), with a row each of two regions.
      const { DuckDBInstance } = await import('@duckdb/node-api');
      const before = await DuckDBInstance.create(path);
      const con = await before.connect();
      await con.run(`CREATE TABLE verifications (request_id VARCHAR NOT NULL, time BIGINT NOT NULL, workspace_id VARCHAR NOT NULL, key_space_id VARCHAR NOT NULL, external_id VARCHAR NOT NULL,
        key_id VARCHAR NOT NULL, outcome VARCHAR NOT NULL, region VARCHAR NOT NULL, source VARCHAR NOT NULL, app_id VARCHAR NOT NULL, tags VARCHAR[] NOT NULL, spent_credits BIGINT NOT NULL)`);
      await con.run(`CREATE TABLE ratelimits (request_id VARCHAR NOT NULL, time BIGINT NOT NULL, workspace_id VARCHAR NOT NULL, namespace_id VARCHAR NOT NULL, namespace_name VARCHAR NOT NULL,
        identifier VARCHAR NOT NULL, passed BOOLEAN NOT NULL, latency DOUBLE NOT NULL, override_id VARCHAR NOT NULL, "limit" BIGINT NOT NULL, remaining BIGINT NOT NULL, reset_at BIGINT NOT NULL, tokens BIGINT NOT NULL)`);
      await con.run(`INSERT INTO verifications VALUES ('old_1', ${T}, 'ws_1', 'api_1', 'cust', 'key_1', 'VALID', 'eu-1', 'api', '', ['t'], 2),
        ('old_2', ${T + 1}, 'ws_1', 'api_1', '', 'key_2', 'DISABLED', 'us-1', 'api', '', [], 0), ('old_3', ${T + 2}, 'ws_1', 'api_1', '', 'key_1', 'VALID', 'eu-1', 'api', '', [], 1)`);
      await con.run(`INSERT INTO ratelimits VALUES ('old_4', ${T}, 'ws_1', 'ns_1', 'api', 'u1', true, 1.5, '', 10, 9, ${T + 1000}, 1)`);
      con.closeSync();
      before.closeSync();

      const opened = await AnalyticsDatabase.open(path, { memoryLimit: '256MB', threads: 1, region: 'eu-1' });
      try {
        // A new verification of a dim the old rows have (this node's region), and one of a new dim.
        expect(await opened.ingest(Buffer.from([line(1, 'new_1', 'api_1', { key: 'k' }, { code: 'VALID', keyId: 'key_1' }, T + 3), line(1, 'new_2', 'api_2', { key: 'k' }, { code: 'VALID', keyId: 'key_9' }, T + 4)].join('\n')))).toEqual({ written: 2, unread: 0 });
        const con2 = await opened.borrow();
        try {
          const all = async (sql: string): Promise<unknown[][]> => (await con2.runAndReadAll(sql)).getRows().map((r) => r.map(jsonValue));
          expect(await all(`SELECT request_id, key_space_id, external_id, key_id, outcome, region, tags, spent_credits FROM (${rawRows('verifications')}) ORDER BY request_id`)).toEqual([
            ['new_1', 'api_1', '', 'key_1', 'VALID', 'eu-1', [], 0],
            ['new_2', 'api_2', '', 'key_9', 'VALID', 'eu-1', [], 0],
            ['old_1', 'api_1', 'cust', 'key_1', 'VALID', 'eu-1', ['t'], 2],
            ['old_2', 'api_1', '', 'key_2', 'DISABLED', 'us-1', [], 0],
            ['old_3', 'api_1', '', 'key_1', 'VALID', 'eu-1', [], 1],
          ]);
          expect(await all(`SELECT request_id, namespace_id, identifier, passed, latency, "limit", remaining, tokens FROM (${rawRows('ratelimits')})`)).toEqual([['old_4', 'ns_1', 'u1', true, 1.5, 10, 9, 1]]);
          // old_1 and old_3 share a dim, which new_1 is written under too.
          expect(await all('SELECT (SELECT count(*) FROM verification_dims), (SELECT count(DISTINCT dim) FROM verification_events)')).toEqual([[3, 3]]);
          expect(await all("SELECT count(*) FROM duckdb_tables() WHERE table_name IN ('verifications', 'ratelimits')")).toEqual([[0]]);
        } finally {
          opened.giveBack(con2, true);
        }
      } finally {
        opened.close();
      }
    } finally {
      rmSync(oldDir, { recursive: true, force: true });
    }
  });
});
