// What the serving threads and the analytics worker (worker.ts) say to each other, and the
// worker's settings (from Config) and statistics (a shared buffer /metrics reads).
import type { MessagePort } from 'node:worker_threads';
import type { TransportedError } from '../errors/errors.js';
import type { AnalyticsConfig } from '../config.js';

/** What the worker needs: the data dir and the configuration (config.ts AnalyticsConfig). */
export interface AnalyticsSettings extends AnalyticsConfig {
  readonly dataDir: string;
}

/** A query's scope (dialect.ts Scope): what the root key may read. */
export interface QueryScope {
  readonly workspaceId: string;
  readonly kind: 'verifications' | 'ratelimits';
  readonly ids?: readonly string[];
}

export interface QueryRequest {
  readonly id: number;
  readonly query: string;
  readonly scope: QueryScope;
  readonly rootKeyId: string;
}

export type QueryReply = { readonly id: number; readonly rows: Record<string, unknown>[] } | { readonly id: number; readonly error: TransportedError };

export type WorkerMessage =
  | { type: 'query'; request: QueryRequest }
  | { type: 'reply'; reply: QueryReply }
  | { type: 'port'; port: MessagePort }
  /** SIGTERM: queries waiting are refused and running ones interrupted (503 shutting_down), so that the server's drain is not held up by them. */
  | { type: 'quiesce' }
  | { type: 'stop' }
  | { type: 'stopped' }
  | { type: 'ready' }
  | { type: 'log'; level: 'warn' | 'error'; msg: string; fields: Record<string, unknown> };

/** The analytics database's file in the data dir (next to it, DuckDB's write-ahead log `analytics.duckdb.wal`). */
export const DATABASE_FILE = 'analytics.duckdb';

/** Slots of the worker's statistics (a Float64Array over a SharedArrayBuffer). */
export const STAT = { written: 0, failed: 1, lagMs: 2 } as const;
export const STAT_SLOTS = 3;
