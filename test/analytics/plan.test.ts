// The rows-read bound (src/analytics/plan.ts): estimated from DuckDB's plan, with cross
// products and nested-loop joins multiplying their inputs.
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { estimateRows, rowsThrough } from '../../src/analytics/plan.js';

let con: DuckDBConnection;
beforeAll(async () => {
  con = await (await DuckDBInstance.create(':memory:')).connect();
  await con.run('CREATE TABLE t AS SELECT range AS x, range % 7 AS g FROM range(20000)');
});
afterAll(() => con.closeSync());

describe('estimateRows', () => {
  it('a scan goes through its table; an aggregate over it no more', async () => {
    expect(await estimateRows(con, 'SELECT x FROM t')).toBe(20_000);
    expect(await estimateRows(con, 'SELECT g, count(*) FROM t GROUP BY g')).toBe(20_000);
  });

  it('a cross join, and a join on an inequality, multiply their inputs', async () => {
    expect(await estimateRows(con, 'SELECT count(*) FROM t a, t b')).toBe(400_000_000);
    expect(await estimateRows(con, 'SELECT count(*) FROM t a, t b, t c')).toBe(8e12);
    expect(await estimateRows(con, 'WITH q AS (SELECT * FROM t) SELECT count(*) FROM q a CROSS JOIN q b')).toBe(400_000_000);
    expect(await estimateRows(con, 'SELECT count(*) FROM t a JOIN t b ON a.x <> b.x')).toBeGreaterThanOrEqual(400_000_000);
  });

  it('a cross join of filtered scans multiplies the tables they read, not the filters\' guessed selectivity', async () => {
    // A query's scope is a filter: DuckDB may estimate one workspace's rows at a fraction of the table, all of which it reads.
    expect(await estimateRows(con, 'SELECT count(*) FROM (SELECT * FROM t WHERE g = 1) a, (SELECT * FROM t WHERE g = 1) b')).toBe(400_000_000);
    expect(await estimateRows(con, "SELECT count(*) FROM (SELECT * FROM t WHERE x::VARCHAR LIKE '%9') a, (SELECT * FROM t WHERE g = 2) b, (SELECT * FROM t WHERE g = 3) c")).toBe(8e12);
  });

  it('a scalar subquery beside a scan (a cross product with one row) does not count the scan\'s table twice', async () => {
    expect(await estimateRows(con, 'SELECT x, (SELECT count(*) FROM t) AS n FROM t WHERE g = 1')).toBeLessThanOrEqual(20_000);
    expect(await estimateRows(con, 'SELECT count(*) * 100.0 / (SELECT count(*) FROM t) AS share FROM t WHERE g = 1')).toBeLessThanOrEqual(20_000);
  });

  it('an equi-join is DuckDB\'s own estimate, about its inputs', async () => {
    const rows = await estimateRows(con, 'SELECT count(*) FROM t a JOIN t b ON a.x = b.x');
    expect(rows).toBeGreaterThanOrEqual(20_000);
    expect(rows).toBeLessThan(1_000_000);
  });
});

describe('rowsThrough', () => {
  it('takes the largest operator of every plan; nodes without estimates pass their inputs up', () => {
    const scan = (n: number) => ({ name: 'SEQ_SCAN', extra_info: { 'Estimated Cardinality': String(n) } });
    expect(rowsThrough([])).toBe(0);
    expect(rowsThrough([{ name: 'PROJECTION', children: [scan(5)] }, scan(9)])).toBe(9);
    expect(rowsThrough([{ name: 'UNGROUPED_AGGREGATE', children: [{ name: 'CROSS_PRODUCT', children: [scan(3), { name: 'FILTER', children: [scan(4)] }] }] }])).toBe(12);
    const tableScan = (n: number) => ({ name: 'SEQ_SCAN', extra_info: { Table: 'db.main.t', 'Estimated Cardinality': String(n) } });
    const tables = new Map([['db.main.t', 12]]);
    expect(rowsThrough([{ name: 'CROSS_PRODUCT', children: [tableScan(2), tableScan(2)] }], tables)).toBe(144);
    expect(rowsThrough([{ name: 'CROSS_PRODUCT', children: [tableScan(2), { name: 'UNGROUPED_AGGREGATE', children: [tableScan(12)] }] }], tables)).toBe(12);
  });
});
