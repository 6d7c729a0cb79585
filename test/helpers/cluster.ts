// A cluster for tests: a throwaway PostgreSQL and keyward nodes on it (live servers).
import { startPostgres, type ThrowawayPostgres } from '../../bench/lib/postgres.js';
import { randomRootKey, startServer, type Server } from './server.js';

export interface TestCluster {
  pg: ThrowawayPostgres;
  nodes: Server[];
  rootKey: string;
  /** Starts one more node (an empty data dir unless given). */
  node(name: string, opts?: { dataDir?: string; env?: Record<string, string> }): Promise<Server>;
}

export async function startCluster(count: number, env: Record<string, string> = {}): Promise<TestCluster> {
  const pg = await startPostgres();
  const rootKey = randomRootKey();
  const node = (name: string, opts: { dataDir?: string; env?: Record<string, string> } = {}): Promise<Server> =>
    startServer({ rootKey, ...(opts.dataDir === undefined ? {} : { dataDir: opts.dataDir }), env: { KEYWARD_POSTGRES_URL: pg.url, KEYWARD_NODE_ID: name, ...env, ...opts.env } });
  const nodes = await Promise.all(Array.from({ length: count }, (_, i) => node(`node-${i}`)));
  return { pg, nodes, rootKey, node };
}

/** Polls `fn` until it returns true, at most `ms`. */
export async function eventually(fn: () => Promise<boolean>, ms = 5_000): Promise<void> {
  const until = Date.now() + ms;
  for (;;) {
    if (await fn()) return;
    if (Date.now() > until) throw new Error(`not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** One row, one column of a query on the cluster's PostgreSQL. */
export async function pgValue<T>(url: string, sql: string): Promise<T | undefined> {
  const { default: pgLib } = await import('pg');
  const client = new pgLib.Client({ connectionString: url });
  await client.connect();
  try {
    const res = await client.query(sql);
    const row = res.rows[0] as Record<string, unknown> | undefined;
    return row === undefined ? undefined : (Object.values(row)[0] as T);
  } finally {
    await client.end();
  }
}
