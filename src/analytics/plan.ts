// How many rows a query would go through, from DuckDB's plan before it runs: the bound behind
// KEYWARD_ANALYTICS_MAX_ROWS_READ (422 query_rows_limit_exceeded), Unkey's "rows read" limit.
// A runaway query (a cross join of the raw table with itself, a scan of more events than the
// limit) is refused before it takes a core for the whole timeout.
import type { DuckDBConnection } from '@duckdb/node-api';

/** A node of `EXPLAIN (FORMAT JSON)`'s tree. */
export interface PlanNode {
  name: string;
  children?: PlanNode[];
  extra_info?: Record<string, unknown>;
}

/** Operators that pair every row of one input with every row of the other. */
const PAIRING = new Set(['CROSS_PRODUCT', 'NESTED_LOOP_JOIN', 'BLOCKWISE_NL_JOIN']);

/**
 * The rows `node` hands up, and the most any operator of its subtree goes through. An
 * operator's own estimate (DuckDB's "Estimated Cardinality") where it gives one; a pairing
 * operator's inputs multiplied (DuckDB gives none for a cross product); otherwise its largest
 * input's.
 */
function walk(node: PlanNode): { out: number; most: number } {
  const inputs = (node.children ?? []).map(walk);
  const most = Math.max(0, ...inputs.map((i) => i.most));
  const stated = Number(node.extra_info?.['Estimated Cardinality']);
  let out: number;
  if (PAIRING.has(node.name)) out = inputs.reduce((product, i) => product * Math.max(1, i.out), 1);
  else if (Number.isFinite(stated)) out = stated;
  else out = Math.max(0, ...inputs.map((i) => i.out));
  return { out, most: Math.max(most, out) };
}

/** The most rows any operator of the plans would go through (DuckDB's estimates). */
export function rowsThrough(plans: readonly PlanNode[]): number {
  return Math.max(0, ...plans.map((p) => walk(p).most));
}

/** Plans `sql` on `con` (without running it) and estimates the rows it would go through. */
export async function estimateRows(con: DuckDBConnection, sql: string): Promise<number> {
  const reader = await con.runAndReadAll(`EXPLAIN (FORMAT JSON) ${sql}`);
  let most = 0;
  for (const row of reader.getRows()) {
    const plan = row[1];
    if (typeof plan === 'string') most = Math.max(most, rowsThrough(JSON.parse(plan) as PlanNode[]));
  }
  return most;
}
