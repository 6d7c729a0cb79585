// A cluster for tests: a throwaway PostgreSQL (and Redis, when asked for) and keyward nodes on
// it (live servers).
import { startPostgres, type ThrowawayPostgres } from '../../bench/lib/postgres.js';
import { startThrowawayRedis, type ThrowawayRedis } from '../../bench/lib/procs.js';
import { afterAll, beforeAll } from 'vitest';
import { Postgres } from '../../src/cluster/postgres.js';
import { migrate } from '../../src/cluster/schema.js';
import { createLogger } from '../../src/log.js';
import { randomRootKey, startServer, type Server } from './server.js';

/**
 * A throwaway PostgreSQL with keyward's schema for the file's tests (started before them,
 * stopped after): the client to it, once it runs.
 */
export function migratedPostgres(): () => Postgres {
  let server: ThrowawayPostgres | undefined;
  let pg: Postgres | undefined;
  beforeAll(async () => {
    server = await startPostgres();
    pg = new Postgres(server.url, createLogger('silent'));
    await migrate(pg);
  });
  afterAll(async () => {
    await pg?.close();
    server?.stop();
  });
  return () => {
    if (pg === undefined) throw new Error('PostgreSQL is not started yet');
    return pg;
  };
}

export interface TestCluster {
  pg: ThrowawayPostgres;
  /** With `{ redis: true }`: the Redis the nodes share windows through. */
  redis: ThrowawayRedis | undefined;
  nodes: Server[];
  rootKey: string;
  /** Starts one more node (an empty data dir unless given). */
  node(name: string, opts?: { dataDir?: string; env?: Record<string, string> }): Promise<Server>;
}

export async function startCluster(count: number, env: Record<string, string> = {}, opts: { redis?: boolean } = {}): Promise<TestCluster> {
  const pg = await startPostgres();
  const redis = opts.redis === true ? await startThrowawayRedis() : undefined;
  const rootKey = randomRootKey();
  const shared = { KEYWARD_POSTGRES_URL: pg.url, ...(redis === undefined ? {} : { KEYWARD_REDIS_URL: redis.url }) };
  const node = (name: string, o: { dataDir?: string; env?: Record<string, string> } = {}): Promise<Server> =>
    startServer({ rootKey, ...(o.dataDir === undefined ? {} : { dataDir: o.dataDir }), env: { ...shared, KEYWARD_NODE_ID: name, ...env, ...o.env } });
  const nodes = await Promise.all(Array.from({ length: count }, (_, i) => node(`node-${i}`)));
  return { pg, redis, nodes, rootKey, node };
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
