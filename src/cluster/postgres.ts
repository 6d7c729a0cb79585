// The cluster's PostgreSQL, through node-postgres: a small pool for writes, catch-up and
// heartbeats, and a dedicated connection for LISTEN. Failures to reach it (refused, reset,
// timed out, the server shutting down) are PostgresUnavailable, and the health `/metrics`
// reports follows them; other errors (a stale write, a constraint) pass through as they are.
import pg from 'pg';
import type { Logger } from '../log.js';

export class PostgresUnavailable extends Error {}

/** A query of one session: rows as objects. */
export type Query = <R = Record<string, unknown>>(sql: string, params?: unknown[]) => Promise<R[]>;

/** SQLSTATE classes and codes that mean the server cannot be used now. */
function unreachable(err: unknown): boolean {
  const code = typeof err === 'object' && err !== null && 'code' in err ? String((err as { code: unknown }).code) : '';
  if (/^(ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|ENOTFOUND|EHOSTUNREACH|EAI_AGAIN)$/.test(code)) return true;
  if (code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03' || code === '53300') return true;
  const message = err instanceof Error ? err.message : '';
  return /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|connect ECONNREFUSED|Query read timeout/i.test(message);
}

export class Postgres {
  private readonly pool: pg.Pool;
  /** Whether the last attempt to use the server reached it. */
  healthy = true;
  /** Why it could not be reached, last time it could not. */
  lastError = '';
  /** When it last could not be reached (performance.now() ms). */
  private failedAt = -Infinity;

  constructor(
    readonly url: string,
    private readonly log: Logger,
    poolSize = 4,
  ) {
    // keepAlive: a peer that vanished (no RST) is found by the kernel, not only by a timeout.
    this.pool = new pg.Pool({ connectionString: url, max: poolSize, connectionTimeoutMillis: 2_000, idleTimeoutMillis: 30_000, keepAlive: true, application_name: 'keyward' });
    // An idle client's connection broke (the server restarted): the pool drops it.
    this.pool.on('error', (err) => this.failed(err));
  }

  private failed(err: unknown): void {
    if (this.healthy) this.log.warn('PostgreSQL is unreachable', { error: (err as Error).message });
    this.healthy = false;
    this.lastError = (err as Error).message;
    this.failedAt = performance.now();
  }

  /** Whether it could not be reached within the last `ms` (and has not been reached since). */
  failedWithin(ms: number): boolean {
    return !this.healthy && performance.now() - this.failedAt < ms;
  }

  private reached(): void {
    if (!this.healthy) this.log.info('PostgreSQL is reachable again');
    this.healthy = true;
  }

  /** Maps an error of a call: unreachable → PostgresUnavailable, else as it is. */
  private mapped(err: unknown): unknown {
    if (!unreachable(err)) return err;
    this.failed(err);
    return new PostgresUnavailable(`PostgreSQL is unreachable: ${(err as Error).message}`);
  }

  /**
   * One statement on a connection of the pool. With `timeoutMs`, one that has not answered by
   * then fails as unreachable (a server that stopped answering, a peer gone without a reset)
   * and its connection is dropped: what a request waits on has a bound besides the connect's.
   */
  async query<R = Record<string, unknown>>(sql: string, params: unknown[] = [], timeoutMs?: number): Promise<R[]> {
    try {
      // node-postgres takes query_timeout per query; its types do not say so.
      const config: pg.QueryConfig & { query_timeout?: number } = timeoutMs === undefined ? { text: sql, values: params } : { text: sql, values: params, query_timeout: timeoutMs };
      const res = await this.pool.query(config);
      this.reached();
      return res.rows as R[];
    } catch (err) {
      throw this.mapped(err);
    }
  }

  /** Runs `fn` on one connection of the pool (a transaction, an advisory lock, a cursor). */
  async session<T>(fn: (q: Query) => Promise<T>): Promise<T> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      throw this.mapped(err);
    }
    let broken: unknown;
    try {
      const q: Query = async <R>(sql: string, params: unknown[] = []) => {
        try {
          return (await client.query(sql, params)).rows as R[];
        } catch (err) {
          if (unreachable(err)) broken = err;
          throw this.mapped(err);
        }
      };
      const result = await fn(q);
      this.reached();
      return result;
    } finally {
      client.release(broken instanceof Error ? broken : undefined);
    }
  }

  /**
   * A connection of its own that LISTENs on `channel`: `onNotify` gets each payload;
   * `onLost` is called once when the connection breaks (the caller listens again later).
   */
  async listen(channel: string, onNotify: (payload: string) => void, onLost: (err: Error) => void): Promise<() => Promise<void>> {
    const client = new pg.Client({ connectionString: this.url, connectionTimeoutMillis: 2_000, application_name: 'keyward-listen' });
    let lost = false;
    const lose = (err: Error): void => {
      if (lost) return;
      lost = true;
      this.failed(err);
      onLost(err);
    };
    client.on('error', lose);
    client.on('end', () => lose(new Error('the LISTEN connection ended')));
    client.on('notification', (n) => onNotify(n.payload ?? ''));
    try {
      await client.connect();
      await client.query(`LISTEN ${channel}`);
    } catch (err) {
      lost = true;
      void client.end().catch(() => undefined);
      throw this.mapped(err);
    }
    this.reached();
    return async () => {
      lost = true;
      await client.end().catch(() => undefined);
    };
  }

  async close(): Promise<void> {
    await this.pool.end().catch(() => undefined);
  }
}
