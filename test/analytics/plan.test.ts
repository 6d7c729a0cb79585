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
  });
});
