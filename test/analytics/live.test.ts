// Analytics on a live server (docs/analytics.md): every verifyKey / limit / multiLimit
// decision becomes an event in DuckDB, queryable through analytics.getVerifications and
// getRatelimits in Unkey's dialect, confined to the root key's workspace and grants.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Unkey } from '@unkey/api';
import { describe, expect, it } from 'vitest';
import { liveServer } from '../helpers/live.js';
import { call, createApi, expectError, expectOk, foreignRootKey, get, rootKeyWith, startServer, type Server } from '../helpers/server.js';

const ON = { KEYWARD_ANALYTICS: 'on' };
const srv = liveServer({ env: ON });

type Row = Record<string, unknown>;

/** The rows of `query`, once `ready` holds for them (events are written within a second or so). */
async function rowsWhen(server: Pick<Server, 'url' | 'rootKey'>, procedure: string, query: string, ready: (rows: Row[]) => boolean, rootKey?: string): Promise<Row[]> {
  const until = Date.now() + 5_000;
  for (;;) {
    const res = await call(server, procedure, { query }, rootKey === undefined ? {} : { rootKey });
    expect(res.status, res.text).toBe(200);
    const rows = res.json.data as Row[];
    if (ready(rows) || Date.now() > until) return rows;
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function key(server: Server, apiId: string, extra: Record<string, unknown> = {}): Promise<{ key: string; keyId: string }> {
  const res = await call(server, 'keys.createKey', { apiId, ...extra });
  expect(res.status, res.text).toBe(200);
  return res.json.data as { key: string; keyId: string };
}

describe('analytics, live', () => {
  it('records every verification with Unkey columns; raw rows and rollups agree', async () => {
    const apiId = await createApi(srv());
    const a = await key(srv(), apiId, { externalId: 'cust_a', credits: { remaining: 3 } });
    const b = await key(srv(), apiId, { enabled: false });
    for (let i = 0; i < 5; i++) await call(srv(), 'keys.verifyKey', { key: a.key, tags: ['path=/a', `i=${i % 2}`] });
    await call(srv(), 'keys.verifyKey', { key: b.key });
    await call(srv(), 'keys.verifyKey', { key: 'sk_nothing_like_it' });
    const where = `key_space_id = '${apiId}'`;
    const rows = await rowsWhen(srv(), 'analytics.getVerifications', `SELECT outcome, count(*) AS n, sum(spent_credits) AS spent FROM key_verifications_v1 WHERE ${where} GROUP BY outcome ORDER BY outcome`, (r) => r.reduce((s, x) => s + Number(x.n), 0) >= 6);
    expect(rows).toEqual([
      { outcome: 'DISABLED', n: 1, spent: 0 },
      { outcome: 'USAGE_EXCEEDED', n: 2, spent: 0 },
      { outcome: 'VALID', n: 3, spent: 3 },
    ]);
    const raw = await call(srv(), 'analytics.getVerifications', { query: `SELECT key_id, external_id, tags, region, source, time FROM key_verifications_v1 WHERE ${where} AND outcome = 'VALID' ORDER BY time LIMIT 1` });
    const first = (raw.json.data as Row[])[0] as Row;
    expect(first).toMatchObject({ key_id: a.keyId, external_id: 'cust_a', tags: ['path=/a', 'i=0'], region: 'local', source: 'api' });
    expect(typeof first.time).toBe('number');
    for (const grain of ['minute', 'hour', 'day', 'month']) {
      const rolled = await call(srv(), 'analytics.getVerifications', { query: `SELECT outcome, sum(count) AS n, sum(spent_credits) AS spent FROM key_verifications_per_${grain}_v1 WHERE ${where} GROUP BY outcome ORDER BY outcome` });
      expect(rolled.json.data, grain).toEqual(rows);
    }
    const hour = await call(srv(), 'analytics.getVerifications', { query: `SELECT time FROM key_verifications_per_hour_v1 WHERE ${where} LIMIT 1` });
    expect((hour.json.data as Row[])[0]?.time).toMatch(/^\d{4}-\d\d-\d\d \d\d:00:00$/);
    const day = await call(srv(), 'analytics.getVerifications', { query: `SELECT time FROM key_verifications_per_day_v1 WHERE ${where} LIMIT 1` });
    expect((day.json.data as Row[])[0]?.time).toMatch(/^\d{4}-\d\d-\d\d$/);
  });

  it('records limit and multiLimit decisions in ratelimits_v1', async () => {
    const ns = `ns_${Date.now()}`;
    for (let i = 0; i < 3; i++) await call(srv(), 'ratelimits.limit', { namespace: ns, identifier: 'u1', limit: 2, duration: 60_000 });
    await call(srv(), 'ratelimits.multiLimit', [{ namespace: ns, identifier: 'u2', limit: 5, duration: 60_000, cost: 2 }]);
    const rows = await rowsWhen(srv(), 'analytics.getRatelimits', `SELECT identifier, countIf(passed) AS passed, count(*) AS total, sum(tokens) AS tokens FROM ratelimits_v1 WHERE identifier IN ('u1', 'u2') GROUP BY identifier ORDER BY identifier`, (r) => r.reduce((s, x) => s + Number(x.total), 0) >= 4);
    expect(rows).toEqual([
      { identifier: 'u1', passed: 2, total: 3, tokens: 3 },
      { identifier: 'u2', passed: 1, total: 1, tokens: 2 },
    ]);
    const rolled = await call(srv(), 'analytics.getRatelimits', { query: `SELECT identifier, sum(passed) AS passed, sum(total) AS total FROM ratelimits_per_minute_v1 WHERE identifier IN ('u1', 'u2') GROUP BY identifier ORDER BY identifier` });
    expect(rolled.json.data).toEqual([
      { identifier: 'u1', passed: 2, total: 3 },
      { identifier: 'u2', passed: 1, total: 1 },
    ]);
    // Unkey's latency states, as its docs read them: the raw latencies' average and quantiles.
    const raw = await call(srv(), 'analytics.getRatelimits', { query: `SELECT avg(latency) AS avg, min(latency) AS lo, max(latency) AS hi FROM ratelimits_v1 WHERE identifier IN ('u1', 'u2')` });
    const states = await call(srv(), 'analytics.getRatelimits', {
      query: `SELECT avgMerge(latency_avg) AS average_latency, quantilesTDigestMerge(0.75)(latency_p75)[1] AS p75_latency, quantilesTDigestMerge(0.99)(latency_p99)[1] AS p99_latency FROM ratelimits_per_hour_v1 WHERE identifier IN ('u1', 'u2')`,
    });
    const { avg, lo, hi } = (raw.json.data as { avg: number; lo: number; hi: number }[])[0] ?? { avg: NaN, lo: NaN, hi: NaN };
    const [row] = states.json.data as { average_latency: number; p75_latency: number; p99_latency: number }[];
    expect(row?.average_latency).toBeCloseTo(avg, 9);
    for (const q of [row?.p75_latency, row?.p99_latency]) {
      expect(q).toBeGreaterThanOrEqual(lo);
      expect(q).toBeLessThanOrEqual(hi);
    }
  });

  it('a body sent pretty-printed, with a trailing newline, or naming its members with escapes is recorded as it was decided', async () => {
    const failed = async (): Promise<number> => Number(/^keyward_analytics_events_failed_total (\S+)$/m.exec((await get(srv(), '/metrics')).text)?.[1]);
    const failedBefore = await failed();
    const ns = `ns_raw_${Date.now()}`;
    const apiId = await createApi(srv());
    const k = await key(srv(), apiId, { credits: { remaining: 100 } });
    await call(srv(), 'ratelimits.limit', { namespace: ns, identifier: 'first', limit: 5, duration: 60_000 });
    const sent: [string, string][] = [
      ['ratelimits.limit', `{"namespace":"${ns}","identifier":"trailing","limit":5,"duration":60000}\n`],
      ['ratelimits.limit', JSON.stringify({ namespace: ns, identifier: 'pretty', limit: 5, duration: 60_000 }, null, 2)],
      ['ratelimits.limit', `{"namespace":"${ns}",\r\n"identifi\\u0065r":"escaped","limit":5,"duration":60000,"\\u0063ost":3}`],
      ['keys.verifyKey', `{\n  "key": "${k.key}",\n  "t\\u0061gs": ["a", "b"],\n  "cr\\u0065dits": {"\\u0063ost": 7}\n}\n`],
    ];
    const ids: string[] = [];
    for (const [procedure, rawBody] of sent) {
      const res = await call(srv(), procedure, undefined, { rawBody });
      expect(res.status, res.text).toBe(200);
      ids.push((res.json.meta as { requestId: string }).requestId);
    }
    const inIds = ids.map((id) => `'${id}'`).join(', ');
    const limits = await rowsWhen(srv(), 'analytics.getRatelimits', `SELECT identifier, tokens FROM ratelimits_v1 WHERE request_id IN (${inIds}) ORDER BY identifier`, (r) => r.length >= 3);
    expect(limits).toEqual([
      { identifier: 'escaped', tokens: 3 },
      { identifier: 'pretty', tokens: 1 },
      { identifier: 'trailing', tokens: 1 },
    ]);
    const verifications = await rowsWhen(srv(), 'analytics.getVerifications', `SELECT outcome, tags, spent_credits FROM key_verifications_v1 WHERE request_id IN (${inIds})`, (r) => r.length >= 1);
    expect(verifications).toEqual([{ outcome: 'VALID', tags: ['a', 'b'], spent_credits: 7 }]);
    expect(await failed()).toBe(failedBefore);
  });

  it('X-Unkey-Metrics: disabled leaves no event', async () => {
    const apiId = await createApi(srv());
    const k = await key(srv(), apiId);
    await call(srv(), 'keys.verifyKey', { key: k.key }, { headers: { 'X-Unkey-Metrics': 'disabled' } });
    await call(srv(), 'keys.verifyKey', { key: k.key });
    const rows = await rowsWhen(srv(), 'analytics.getVerifications', `SELECT count(*) AS n FROM key_verifications_v1 WHERE key_space_id = '${apiId}'`, (r) => Number(r[0]?.n) >= 1);
    await new Promise((r) => setTimeout(r, 600));
    const again = await call(srv(), 'analytics.getVerifications', { query: `SELECT count(*) AS n FROM key_verifications_v1 WHERE key_space_id = '${apiId}'` });
    expect(rows).toEqual([{ n: 1 }]);
    expect(again.json.data).toEqual([{ n: 1 }]);
  });

  it('a root key reads only its workspace, and only the APIs it may read_analytics', async () => {
    const [api1, api2] = [await createApi(srv()), await createApi(srv())];
    const [k1, k2] = [await key(srv(), api1), await key(srv(), api2)];
    await call(srv(), 'keys.verifyKey', { key: k1.key });
    await call(srv(), 'keys.verifyKey', { key: k2.key });
    const q = `SELECT key_space_id, count(*) AS n FROM key_verifications_v1 WHERE key_space_id IN ('${api1}', '${api2}') GROUP BY key_space_id ORDER BY key_space_id`;
    await rowsWhen(srv(), 'analytics.getVerifications', q, (r) => r.length === 2);
    const scoped = await rootKeyWith(srv(), [`api.${api1}.read_analytics`]);
    const mine = await call(srv(), 'analytics.getVerifications', { query: q }, { rootKey: scoped.key });
    expect(mine.json.data).toEqual([{ key_space_id: api1, n: 1 }]);
    const none = await call(srv(), 'analytics.getVerifications', { query: 'SELECT count(*) AS n FROM key_verifications_v1' }, { rootKey: await foreignRootKey(srv()) });
    expect(none.json.data).toEqual([{ n: 0 }]);
  });

  it('fills the gaps of a series (ORDER BY … WITH FILL) through the worker; a fill too long for the row limit is 422', async () => {
    const apiId = await createApi(srv());
    const a = await key(srv(), apiId);
    await call(srv(), 'keys.verifyKey', { key: a.key });
    const where = `key_space_id = '${apiId}'`;
    await rowsWhen(srv(), 'analytics.getVerifications', `SELECT count(*) AS n FROM key_verifications_v1 WHERE ${where}`, (r) => Number(r[0]?.n) >= 1);
    const res = await call(srv(), 'analytics.getVerifications', {
      query: `SELECT time, SUM(count) AS total FROM key_verifications_per_day_v1 WHERE ${where} GROUP BY time ORDER BY time WITH FILL FROM toDate(now() - INTERVAL 7 DAY) TO toDate(now()) STEP INTERVAL 1 DAY`,
    });
    const data = expectOk(res) as { time: string; total: number }[];
    expect(data.slice(0, 7).map((r) => r.total)).toEqual([0, 0, 0, 0, 0, 0, 0]);
    expect(data.slice(0, 7).map((r) => r.time)).toEqual(Array.from({ length: 7 }, (_, i) => new Date(Date.now() - (7 - i) * 86_400_000).toISOString().slice(0, 10)));
    expect(data.slice(7)).toEqual([{ time: new Date().toISOString().slice(0, 10), total: 1 }]);
    expectError(await call(srv(), 'analytics.getVerifications', { query: `SELECT time, SUM(count) AS total FROM key_verifications_per_minute_v1 WHERE ${where} GROUP BY time ORDER BY time WITH FILL FROM now() - INTERVAL 30 DAY TO now() STEP 1` }), 422, 'query_rows_limit_exceeded');
  });

  it('refuses what is not a SELECT over its tables, and keeps serving', async () => {
    expectError(await call(srv(), 'analytics.getVerifications', { query: "SELECT * FROM read_csv('/etc/passwd')" }), 400, 'invalid_analytics_table');
    expectError(await call(srv(), 'analytics.getVerifications', { query: 'SELECT count(*) FROM ratelimits_v1' }), 400, 'invalid_analytics_table');
    expectError(await call(srv(), 'analytics.getVerifications', { query: 'DELETE FROM key_verifications_v1' }), 400, 'invalid_analytics_query_type');
    expectError(await call(srv(), 'analytics.getVerifications', { query: "SELECT getenv('HOME')" }), 400, 'invalid_analytics_function');
    expectError(await call(srv(), 'analytics.getVerifications', { query: 'SELEC 1' }), 400, 'invalid_analytics_query');
    expect((await call(srv(), 'analytics.getVerifications', { query: 'SELECT 1 AS one' })).json.data).toEqual([{ one: 1 }]);
  });

  it('the SDK reads analytics unchanged, and /metrics counts the events', async () => {
    const unkey = new Unkey({ serverURL: srv().url, rootKey: srv().rootKey, retryConfig: { strategy: 'none' } });
    const res = await unkey.analytics.getVerifications({ query: 'SELECT count(*) AS n FROM key_verifications_v1' });
    expect(Number((res.data[0] as Row).n)).toBeGreaterThan(0);
    const metrics = (await get(srv(), '/metrics')).text;
    expect(metrics).toMatch(/^keyward_analytics_events_written_total [1-9]/m);
    expect(metrics).toMatch(/^keyward_analytics_events_dropped_total 0$/m);
  });
});

describe('analytics, lifecycle', () => {
  it('SIGTERM right after the replies loses no event (analytics is on by default); KEYWARD_ANALYTICS=off answers 412', async () => {
    const server = await startServer();
    const apiId = await createApi(server);
    const k = await key(server, apiId);
    await Promise.all(Array.from({ length: 200 }, () => call(server, 'keys.verifyKey', { key: k.key })));
    expect(await server.stop()).toBe(0);
    const again = await startServer({ dataDir: server.dataDir, rootKey: server.rootKey });
    const rows = await call(again, 'analytics.getVerifications', { query: `SELECT count(*) AS n FROM key_verifications_v1 WHERE key_space_id = '${apiId}'` });
    expect(rows.json.data).toEqual([{ n: 200 }]);
    await again.stop();
    const off = await startServer({ dataDir: server.dataDir, rootKey: server.rootKey, env: { KEYWARD_ANALYTICS: 'off' } });
    expectError(await call(off, 'analytics.getVerifications', { query: 'SELECT 1' }), 412, 'analytics_not_configured');
    await off.stop();
  });

  it('a damaged analytics database stops the start with the way back, and the keys are served with analytics off', async () => {
    const server = await startServer({ env: ON });
    const apiId = await createApi(server);
    const k = await key(server, apiId);
    expect(await server.stop()).toBe(0);
    const file = join(server.dataDir, 'analytics.duckdb');
    const bytes = readFileSync(file);
    bytes.fill(7, 0, 4096);
    writeFileSync(file, bytes);
    const refused = startServer({ dataDir: server.dataDir, rootKey: server.rootKey, env: ON });
    await expect(refused).rejects.toThrow(/exited early with code 1[\s\S]*could not be opened: IO Error[\s\S]*KEYWARD_ANALYTICS=off/);
    await expect(refused).rejects.toThrow(file);
    const off = await startServer({ dataDir: server.dataDir, rootKey: server.rootKey, env: { KEYWARD_ANALYTICS: 'off' } });
    expect((await call(off, 'keys.verifyKey', { key: k.key })).json.data.valid).toBe(true);
    await off.stop();
  });

  it('a second server on the data dir with analytics on stops at start, naming KEYWARD_ANALYTICS=off; with it off, it serves', async () => {
    const first = await startServer({ env: ON });
    const apiId = await createApi(first);
    const k = await key(first, apiId);
    const second = startServer({ dataDir: first.dataDir, rootKey: first.rootKey, env: ON });
    await expect(second).rejects.toThrow(/exited early with code 1[\s\S]*held by another process[\s\S]*KEYWARD_ANALYTICS=off/);
    const off = await startServer({ dataDir: first.dataDir, rootKey: first.rootKey, env: { KEYWARD_ANALYTICS: 'off' } });
    expect((await call(off, 'keys.verifyKey', { key: k.key })).json.data.valid).toBe(true);
    await off.stop();
    await first.stop();
  });

  it('a burst beyond the buffer drops events and counts them, never holding more than the buffer', async () => {
    const server = await startServer({ env: { ...ON, KEYWARD_ANALYTICS_BUFFER_BYTES: '8192' } });
    const apiId = await createApi(server);
    const k = await key(server, apiId);
    await Promise.all(Array.from({ length: 1_000 }, () => call(server, 'keys.verifyKey', { key: k.key })));
    const metric = async (name: string): Promise<number> => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec((await get(server, '/metrics')).text)?.[1]);
    const until = Date.now() + 5_000;
    while ((await metric('keyward_analytics_buffered_bytes')) > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
    await new Promise((r) => setTimeout(r, 500));
    const [written, dropped] = [await metric('keyward_analytics_events_written_total'), await metric('keyward_analytics_events_dropped_total')];
    expect(dropped).toBeGreaterThan(0);
    expect(written + dropped).toBe(1_000);
    const rows = await call(server, 'analytics.getVerifications', { query: `SELECT count(*) AS n FROM key_verifications_v1 WHERE key_space_id = '${apiId}'` });
    expect(rows.json.data).toEqual([{ n: written }]);
    await server.stop();
  });
});

/** How many threads of process `pid` run at SCHED_IDLE (policy 5, field 41 of /proc/…/stat). */
function idleThreads(pid: number): number {
  let n = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      // The fields after the command name (which may hold spaces) start at field 3.
      if (stat.slice(stat.lastIndexOf(')') + 2).split(' ')[41 - 3] === '5') n++;
    } catch {
      // The thread ended while we looked.
    }
  }
  return n;
}

describe('analytics, priority', () => {
  it('the analytics threads run at idle priority while nothing is asked of them, and KEYWARD_ANALYTICS_PRIORITY=normal keeps them at normal', async () => {
    const server = await startServer({ env: ON });
    const pid = server.child.pid as number;
    const gauge = async (): Promise<string | undefined> => /^keyward_analytics_idle_priority (\S+)$/m.exec((await get(server, '/metrics')).text)?.[1];
    const idleWithin = async (ms: number): Promise<string | undefined> => {
      const until = Date.now() + ms;
      while ((await gauge()) !== '1' && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
      return gauge();
    };
    // Lowering needs a process that may raise them again (root, CAP_SYS_NICE or RLIMIT_NICE 20).
    if (process.getuid?.() === 0) expect(await idleWithin(3_000)).toBe('1');
    if ((await gauge()) === '1') {
      // The worker's thread and libuv's pool (4 threads).
      expect(idleThreads(pid)).toBeGreaterThanOrEqual(5);
      // A query raises them for as long as it runs; the governor lowers them again within its tick.
      const apiId = await createApi(server);
      const k = await key(server, apiId);
      await call(server, 'keys.verifyKey', { key: k.key });
      await rowsWhen(server, 'analytics.getVerifications', `SELECT count(*) AS n FROM key_verifications_v1 WHERE key_space_id = '${apiId}'`, (r) => r[0]?.n === 1);
      expect(await idleWithin(3_000)).toBe('1');
      expect(idleThreads(pid)).toBeGreaterThanOrEqual(5);
    } else {
      expect(idleThreads(pid)).toBe(0);
    }
    await server.stop();
    const normal = await startServer({ env: { ...ON, KEYWARD_ANALYTICS_PRIORITY: 'normal' } });
    expect(/^keyward_analytics_idle_priority 0$/m.test((await get(normal, '/metrics')).text)).toBe(true);
    expect(idleThreads(normal.child.pid as number)).toBe(0);
    await normal.stop();
  });
});

/**
 * A server with analytics on and `env`, and a key verified 300 times, once all 300 events
 * are queryable: `count` is the query that counts them.
 */
async function verifiedThreeHundredTimes(env: Record<string, string>): Promise<{ server: Server; k: { key: string; keyId: string }; count: string }> {
  const server = await startServer({ env: { ...ON, ...env } });
  const apiId = await createApi(server);
  const k = await key(server, apiId);
  await Promise.all(Array.from({ length: 300 }, () => call(server, 'keys.verifyKey', { key: k.key })));
  const count = `SELECT count(*) AS n FROM key_verifications_v1 WHERE key_space_id = '${apiId}'`;
  expect(await rowsWhen(server, 'analytics.getVerifications', count, (r) => r[0]?.n === 300)).toEqual([{ n: 300 }]);
  return { server, k, count };
}

describe('analytics, limits', () => {
  it('refuses a query that would read too much before it runs and queries beyond the hourly quota, answers deep nesting or refuses it beyond the depth DuckDB takes, and keeps serving', async () => {
    const { server, k } = await verifiedThreeHundredTimes({ KEYWARD_ANALYTICS_MAX_ROWS_READ: '10000', KEYWARD_ANALYTICS_QUERIES_PER_HOUR: '12' });
    const crossed = await call(server, 'analytics.getVerifications', { query: 'SELECT count(*) AS n FROM key_verifications_v1 a, key_verifications_v1 b, key_verifications_v1 c' });
    expectError(crossed, 422, 'query_rows_limit_exceeded');
    expect(crossed.json.error.detail).toContain('KEYWARD_ANALYTICS_MAX_ROWS_READ');
    const nested = await call(server, 'analytics.getVerifications', { query: `SELECT ${'('.repeat(3000)}1${')'.repeat(3000)} AS one` });
    expect(nested.json.data, nested.text).toEqual([{ one: 1 }]);
    const subqueries = await call(server, 'analytics.getVerifications', { query: `SELECT count(*) AS n FROM ${'(SELECT * FROM '.repeat(600)}key_verifications_v1${')'.repeat(600)}` });
    expectError(subqueries, 400, 'invalid_analytics_query');
    expect(subqueries.json.error.detail).toMatch(/depth limit of 1000 exceeded\.$/);
    // The quota counts every query of the root key this hour, refused ones included.
    const quota = await rootKeyWith(server, ['api.*.read_analytics']);
    for (let i = 0; i < 12; i++) expect((await call(server, 'analytics.getVerifications', { query: 'SELECT 1 AS one' }, { rootKey: quota.key })).status).toBe(200);
    expectError(await call(server, 'analytics.getVerifications', { query: 'SELECT 1 AS one' }, { rootKey: quota.key }), 429, 'query_quota_exceeded');
    expect((await call(server, 'keys.verifyKey', { key: k.key })).json.data.valid).toBe(true);
    await server.stop();
  });

  it('stops a query that runs past the timeout (422), and the queries after it run, on connections kept between queries', async () => {
    const { server, count } = await verifiedThreeHundredTimes({ KEYWARD_ANALYTICS_QUERY_TIMEOUT_MS: '300', KEYWARD_ANALYTICS_MAX_ROWS_READ: '1000000000000' });
    // 300⁴ = 8.1 × 10⁹ combinations: seconds of work, stopped at 300 ms.
    const slow = 'SELECT count(*) AS n FROM key_verifications_v1 a, key_verifications_v1 b, key_verifications_v1 c, key_verifications_v1 d';
    for (let round = 0; round < 2; round++) {
      const started = Date.now();
      const stopped = await call(server, 'analytics.getVerifications', { query: slow });
      expectError(stopped, 422, 'query_execution_timeout');
      expect(Date.now() - started).toBeLessThan(5_000);
      const after = await Promise.all(Array.from({ length: 6 }, () => call(server, 'analytics.getVerifications', { query: count })));
      for (const res of after) expect(res.json.data, res.text).toEqual([{ n: 300 }]);
    }
    await server.stop();
  });

  it('queries running for long hold neither ingestion nor a SIGTERM: events are written meanwhile, the queries answer 503 shutting_down, the process exits 0 and no event of an answered call is lost', async () => {
    const { server, k, count } = await verifiedThreeHundredTimes({ KEYWARD_ANALYTICS_QUERY_TIMEOUT_MS: '60000', KEYWARD_ANALYTICS_MAX_ROWS_READ: '1000000000000000' });
    // 300⁵ combinations each: they would run for minutes; more of them than libuv's pool has threads.
    const slow = 'SELECT count(*) AS n FROM key_verifications_v1 a, key_verifications_v1 b, key_verifications_v1 c, key_verifications_v1 d, key_verifications_v1 e';
    const running = Array.from({ length: 5 }, () => call(server, 'analytics.getVerifications', { query: slow }));
    await new Promise((resolve) => setTimeout(resolve, 500));
    await Promise.all(Array.from({ length: 50 }, () => call(server, 'keys.verifyKey', { key: k.key })));
    const written = async (): Promise<number> => Number(/^keyward_analytics_events_written_total (\d+)$/m.exec((await get(server, '/metrics')).text)?.[1]);
    const until = Date.now() + 5_000;
    while ((await written()) < 350 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await written(), 'events written while the queries run').toBe(350);
    const stopping = Date.now();
    expect(await server.stop()).toBe(0);
    expect(Date.now() - stopping).toBeLessThan(8_000);
    for (const res of await Promise.all(running)) expectError(res, 503, 'shutting_down');
    const again = await startServer({ dataDir: server.dataDir, rootKey: server.rootKey, env: ON });
    expect((await call(again, 'analytics.getVerifications', { query: count })).json.data).toEqual([{ n: 350 }]);
    await again.stop();
  });
});
