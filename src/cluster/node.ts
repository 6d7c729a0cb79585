// A node of a cluster (KEYWARD_POSTGRES_URL): its PostgreSQL, its schema, its replica and the
// writer of its management writes and its part of the leases of credits, per serving thread;
// the heartbeat and what /metrics says of the cluster. Verifications and rate limits do not
// wait on PostgreSQL in the common case: they read the replica and spend from leases.
import type { Config } from '../config.js';
import type { DurabilityGate } from '../engine/durability.js';
import type { Logger } from '../log.js';
import { gatedWriter, type Writer } from '../store/db.js';
import type { HotCalls } from '../engine/hotCalls.js';
import { getText } from '../store/db.js';
import { ClusterCredits } from './credits.js';
import { ClusterCalls } from './settle.js';
import { ClusterWindows } from './windows.js';
import { Postgres } from './postgres.js';
import { CLUSTER_ID, Replica } from './replica.js';
import { migrate } from './schema.js';
import { ClusterWriter } from './writer.js';

/** How often a node reports itself alive and how far it has applied the log. */
const HEARTBEAT_MS = 2_000;

/**
 * One serving thread's part of the cluster: a replica of its own, a writer through it, its
 * part of the leases of credits and of the windows shared through Redis, and where hot calls
 * only the cluster can decide are settled.
 */
export interface ThreadCluster {
  readonly pg: Postgres;
  readonly replica: Replica;
  readonly writer: ClusterWriter;
  readonly credits: ClusterCredits;
  /** Undefined without KEYWARD_REDIS_URL (each node counts its own windows). */
  readonly windows: ClusterWindows | undefined;
  readonly calls: ClusterCalls;
}

/**
 * A thread's cluster part. `gate`: the serving thread's (its open batch is committed before
 * the replica or a dry run writes); none outside a server (the CLI).
 */
export function threadCluster(config: Config, log: Logger, gate: DurabilityGate | undefined, local: Writer, hot: HotCalls): ThreadCluster {
  if (config.postgresUrl === undefined) throw new Error('cluster mode needs KEYWARD_POSTGRES_URL');
  const pg = new Postgres(config.postgresUrl, log);
  // Not grouped: the replica and the leases count what they applied once its commit is done.
  const writer = gate === undefined ? local : gatedWriter(gate, false);
  const replica = new Replica(pg, writer, log);
  const credits = new ClusterCredits(pg, writer, replica, config.nodeId, { offline: config.clusterCreditsOffline, allowance: config.clusterCreditsOfflineAllowance, leaseTtlMs: config.clusterLeaseTtlMs, quietMs: config.clusterLeaseQuietMs }, log);
  const windows = config.redisUrl === undefined ? undefined : new ClusterWindows(config.redisUrl, hot, pg, config.nodeId, log);
  return { pg, replica, writer: new ClusterWriter(pg, replica, gate, config.nodeId), credits, windows, calls: new ClusterCalls(credits, windows, gate) };
}

/** Creates or upgrades the schema (safe when several nodes start at once). */
export async function prepareCluster(cluster: ThreadCluster): Promise<void> {
  await migrate(cluster.pg);
}

/** Once the replica is up: leases kept, and windows shared (under the cluster's id in Redis). */
export async function startCounting(cluster: ThreadCluster): Promise<void> {
  await cluster.credits.start();
  await cluster.windows?.start(getText('meta', CLUSTER_ID) ?? 'cluster');
}

/**
 * Reports this node alive (kw_nodes) every HEARTBEAT_MS, renews its leases of credits every
 * quarter of `leaseTtlMs`, and keeps the change log to its last `logKeep` changes (a node
 * further behind loads a snapshot); returns what stops it.
 */
export function startHeartbeat(cluster: ThreadCluster, nodeId: string, logKeep: number, leaseTtlMs: number): () => void {
  let timer: NodeJS.Timeout | undefined;
  let leasesRenewedAt = 0;
  const beat = async (): Promise<void> => {
    const applied = cluster.replica.status(Date.now()).appliedSeq;
    await cluster.pg
      .query('INSERT INTO kw_nodes (node, applied_seq, seen_at) VALUES ($1, $2, now()) ON CONFLICT (node) DO UPDATE SET applied_seq = EXCLUDED.applied_seq, seen_at = now()', [nodeId, applied])
      .catch(() => undefined);
    // The leases this node holds stay its own (a lease not renewed for the TTL counts as
    // spent): renewed four times a TTL, not every beat (a row per lease held).
    if (Date.now() - leasesRenewedAt >= leaseTtlMs / 4) {
      leasesRenewedAt = Date.now();
      await cluster.pg.query('UPDATE kw_leases SET renewed_at = now() WHERE node = $1 AND granted > settled', [nodeId]).catch(() => (leasesRenewedAt = 0));
    }
    await cluster.pg.query('DELETE FROM kw_changes WHERE seq <= (SELECT seq FROM kw_head) - $1', [logKeep]).catch(() => undefined);
    timer = setTimeout(() => void beat(), HEARTBEAT_MS);
    timer.unref();
  };
  void beat();
  return () => clearTimeout(timer);
}

/** The cluster's lines of /metrics. */
export function clusterMetrics(cluster: ThreadCluster, nowMs: number): string {
  const s = cluster.replica.status(nowMs);
  return [
    '# HELP keyward_cluster_postgres_up Whether this node reached PostgreSQL on its last attempt.',
    '# TYPE keyward_cluster_postgres_up gauge',
    `keyward_cluster_postgres_up ${cluster.pg.healthy ? 1 : 0}`,
    '# HELP keyward_cluster_applied_seq The last change of the cluster log this node has applied.',
    '# TYPE keyward_cluster_applied_seq gauge',
    `keyward_cluster_applied_seq ${s.appliedSeq}`,
    '# HELP keyward_cluster_head_seq The last change of the cluster log this node knows of.',
    '# TYPE keyward_cluster_head_seq gauge',
    `keyward_cluster_head_seq ${s.headSeq}`,
    '# HELP keyward_cluster_lag_seconds How long this node has been behind the changes it knows of (0: up to date).',
    '# TYPE keyward_cluster_lag_seconds gauge',
    `keyward_cluster_lag_seconds ${s.lagSeconds}`,
    '# HELP keyward_cluster_wait_seconds Time hot calls of this serving thread waited for the cluster (Redis to grant rate-limit admissions, PostgreSQL to lease or decide credits), by what they needed first.',
    '# TYPE keyward_cluster_wait_seconds histogram',
    ...cluster.calls.waited.windows.rows('keyward_cluster_wait_seconds', 'need="windows"'),
    ...cluster.calls.waited.credits.rows('keyward_cluster_wait_seconds', 'need="credits"'),
    ...(cluster.windows === undefined
      ? []
      : [
          '# HELP keyward_cluster_redis_up Whether rate-limit windows are shared through Redis now (0: each node keeps within its share).',
          '# TYPE keyward_cluster_redis_up gauge',
          `keyward_cluster_redis_up ${cluster.windows.healthy ? 1 : 0}`,
          '# HELP keyward_cluster_redis_commands_total Redis commands (script calls) this serving thread sent for rate-limit windows.',
          '# TYPE keyward_cluster_redis_commands_total counter',
          `keyward_cluster_redis_commands_total ${cluster.windows.commands}`,
        ]),
    '',
  ].join('\n');
}
