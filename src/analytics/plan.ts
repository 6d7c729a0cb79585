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

/** Rows of each stored table, by the name a scan gives it (`Table` in EXPLAIN, e.g. `analytics.main.verifications`). */
export type TableRows = ReadonlyMap<string, number>;

interface Walked {
  /** Rows handed up, as DuckDB estimates them. */
  out: number;
  /**
   * Rows handed up at most: a scan's whole table (DuckDB guesses a filter's selectivity, and
   * a query's scope is a filter, so a scan of one workspace's rows can be estimated at a
   * fraction of what it reads); an aggregate without groups, one; any other operator, no
   * more than its largest input unless DuckDB estimates more (grouping: its estimate).
   */
  bound: number;
  most: number;
}

function estimate(node: PlanNode): number {
  return Number(node.extra_info?.['Estimated Cardinality']);
}

/**
 * The rows `node` hands up, and the most any operator of its subtree goes through. An
 * operator's own estimate (DuckDB's "Estimated Cardinality") where it gives one; a pairing
 * operator's inputs multiplied (DuckDB gives none for a cross product), by their bounds when
 * more than one input may have more than a row (else the scalar subquery DuckDB plans as a
 * cross product would count its other side's whole table); otherwise its largest input's.
 */
function walk(node: PlanNode, tables: TableRows): Walked {
  const inputs = (node.children ?? []).map((child) => walk(child, tables));
  const most = Math.max(0, ...inputs.map((i) => i.most));
  const stated = estimate(node);
  const table = typeof node.extra_info?.['Table'] === 'string' ? tables.get(node.extra_info['Table']) : undefined;
  let out: number;
  let bound: number;
  if (PAIRING.has(node.name)) {
    out = inputs.reduce((product, i) => product * Math.max(1, i.out), 1);
    const many = inputs.filter((i) => i.bound > 1);
    bound = many.length > 1 ? many.reduce((product, i) => product * i.bound, 1) : out;
    out = Math.max(out, bound);
  } else {
    const single = node.name === 'UNGROUPED_AGGREGATE' || node.name === 'SIMPLE_AGGREGATE';
    out = single ? 1 : Number.isFinite(stated) ? stated : Math.max(0, ...inputs.map((i) => i.out));
    if (table !== undefined) bound = Math.max(out, table);
    else if (single) bound = 1;
    else if (node.name.includes('GROUP_BY')) bound = out;
    else bound = Math.max(out, ...inputs.map((i) => i.bound));
  }
  return { out, bound, most: Math.max(most, out) };
}

/** The most rows any operator of the plans would go through (DuckDB's estimates; a pairing operator's by its inputs' bounds). */
export function rowsThrough(plans: readonly PlanNode[], tables: TableRows = new Map()): number {
  return Math.max(0, ...plans.map((p) => walk(p, tables).most));
}

/** Plans `sql` on `con` (without running it) and estimates the rows it would go through. */
export async function estimateRows(con: DuckDBConnection, sql: string): Promise<number> {
  const reader = await con.runAndReadAll(`EXPLAIN (FORMAT JSON) ${sql}`);
  const plans = reader.getRows().flatMap((row) => (typeof row[1] === 'string' ? [JSON.parse(row[1]) as PlanNode[]] : []));
  const tables = await tableRows(con);
  return Math.max(0, ...plans.map((plan) => rowsThrough(plan, tables)));
}

/** The rows of every table of the database (DuckDB's count, kept with each table). */
async function tableRows(con: DuckDBConnection): Promise<TableRows> {
  const reader = await con.runAndReadAll('SELECT database_name, schema_name, table_name, estimated_size FROM duckdb_tables()');
  return new Map(reader.getRows().map(([db, schema, table, size]) => [`${String(db)}.${String(schema)}.${String(table)}`, Number(size)]));
}
