// Configuration: environment variables (and mirrored CLI flags) → one frozen Config.
// Every knob is documented in README §Configuration; parse errors stop start-up with a
// message naming the variable.
import { hostname } from 'node:os';

/** KEYWARD_MAP_BYTES when unset: the initial LMDB map size (it grows as needed). */
/** KEYWARD_START_CHECK_MS's default: the start-up integrity check's budget. */
export const DEFAULT_START_CHECK_MS = 2_000;
export const DEFAULT_MAP_BYTES = 256 * 1024 * 1024;

export type Durability = 'process' | 'disk';
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

export interface Config {
  readonly host: string;
  readonly port: number;
  readonly dataDir: string;
  /** Root key for the bootstrap workspace on an empty data dir; generated when absent. */
  readonly rootKey: string | undefined;
  readonly durability: Durability;
  /** How often the store is flushed to disk in `process` mode (0 disables the timer). */
  readonly syncIntervalMs: number;
  readonly maxBodyBytes: number;
  /** A request whose body has not fully arrived after this long gets 408. */
  readonly requestTimeoutMs: number;
  readonly threads: number;
  /** 32-byte AES key (base64) for recoverable keys; undefined = recoverable keys refused. */
  readonly vaultKey: string | undefined;
  readonly logLevel: LogLevel;
  /** Initial LMDB map size; the map grows by doubling when full. */
  readonly initialMapBytes: number;
  /** Commit through LMDB's writable map, with the map's disk space reserved up front (off by default). */
  readonly writeMap: boolean;
  /** Slots of each serving thread's verification cache (0 = off). */
  readonly verifyCacheSlots: number;
  /** Absolute base URL used in error `type` links; defaults to http://host:port. */
  readonly publicUrl: string;
  /** KEYWARD_POSTGRES_URL: cluster mode, PostgreSQL as the source of truth; undefined: one node. */
  readonly postgresUrl: string | undefined;
  /** KEYWARD_NODE_ID: this node's name in the cluster (default host name and port). */
  readonly nodeId: string;
  /** KEYWARD_CLUSTER_LOG_KEEP: changes the cluster's log keeps; a node further behind loads a snapshot. */
  readonly clusterLogKeep: number;
  /** KEYWARD_REDIS_URL: cluster mode, rate-limit windows shared through this Redis; undefined: each node counts its own. */
  readonly redisUrl: string | undefined;
  /** KEYWARD_CLUSTER_CREDITS_OFFLINE: with PostgreSQL away and a key's lease spent, `refuse` (USAGE_EXCEEDED) or `allow` (up to the allowance). */
  readonly clusterCreditsOffline: 'refuse' | 'allow';
  /** KEYWARD_CLUSTER_CREDITS_OFFLINE_ALLOWANCE: credits of one key one node lets through while PostgreSQL is away (`allow`). */
  readonly clusterCreditsOfflineAllowance: number;
  /** KEYWARD_CLUSTER_LEASE_TTL_MS: a node's lease it has not renewed for this long counts as spent (the bound on credits a dead node takes with it). */
  readonly clusterLeaseTtlMs: number;
  /** KEYWARD_CLUSTER_LEASE_QUIET_MS: a lease nothing was spent from for this long goes back (the key went quiet on this node). */
  readonly clusterLeaseQuietMs: number;
  /** KEYWARD_START_CHECK_MS: the integrity check before serving walks the store for at most this long (0: no check). */
  readonly startCheckMs: number;
  /** KEYWARD_ANALYTICS (`on` by default; its cost: docs/analytics.md "Cost"): events of the hot calls in DuckDB, and the analytics procedures; undefined: off (they answer 412). */
  readonly analytics: AnalyticsConfig | undefined;
}

/** Analytics (docs/analytics.md). */
export interface AnalyticsConfig {
  /** KEYWARD_REGION: the `region` of this node's verification events. */
  readonly region: string;
  /** KEYWARD_ANALYTICS_RETENTION_DAYS: how long raw events are kept (rollups longer). */
  readonly retentionDays: number;
  /** KEYWARD_ANALYTICS_QUERY_TIMEOUT_MS: a query running longer is stopped (422 query_execution_timeout). */
  readonly queryTimeoutMs: number;
  /** KEYWARD_ANALYTICS_MEMORY_MB: DuckDB's memory limit (a query needing more: 422 query_memory_limit_exceeded). */
  readonly memoryMb: number;
  /** KEYWARD_ANALYTICS_QUERIES_PER_HOUR: queries one root key may run per hour (429 query_quota_exceeded). */
  readonly queriesPerHour: number;
  /** KEYWARD_ANALYTICS_MAX_ROWS: rows a query may return (422 query_rows_limit_exceeded). */
  readonly maxRows: number;
  /** KEYWARD_ANALYTICS_MAX_ROWS_READ: rows a query may go through, estimated from its plan (422 query_rows_limit_exceeded). */
  readonly maxRowsRead: number;
  /** KEYWARD_ANALYTICS_BUFFER_BYTES: events waiting for the analytics worker; beyond, events are dropped and counted. */
  readonly bufferBytes: number;
  /**
   * KEYWARD_ANALYTICS_PRIORITY: `idle` (the analytics worker and libuv's pool, where DuckDB
   * works, run at SCHED_IDLE: only on CPU the serving threads leave) or `normal`.
   */
  readonly priority: 'idle' | 'normal';
}

export class ConfigError extends Error {}

const FLAG_TO_ENV: Readonly<Record<string, string>> = {
  '--host': 'KEYWARD_HOST',
  '--port': 'KEYWARD_PORT',
  '--data-dir': 'KEYWARD_DATA_DIR',
  '--durability': 'KEYWARD_DURABILITY',
  '--threads': 'KEYWARD_THREADS',
  '--log-level': 'KEYWARD_LOG_LEVEL',
};

/** Picks `--flag value` / `--flag=value` pairs named in FLAG_TO_ENV out of argv. */
export function flagsToEnv(argv: readonly string[]): { env: Record<string, string>; rest: string[] } {
  const env: Record<string, string> = {};
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    const [flag, inline] = arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    const name = FLAG_TO_ENV[flag];
    if (name === undefined) {
      rest.push(arg);
      continue;
    }
    const value = inline ?? argv[++i];
    if (value === undefined) throw new ConfigError(`${flag} needs a value`);
    env[name] = value;
  }
  return { env, rest };
}

/** The longest body deadline that still answers 408 before uWebSockets.js drops the connection. */
export const MAX_REQUEST_TIMEOUT_MS = 7_000;

function int(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(`${name} must be a whole number from ${min} to ${max}, got '${raw}'`);
  const value = Number(raw.trim());
  if (value < min || value > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`);
  return value;
}

function oneOf<T extends string>(env: NodeJS.ProcessEnv, name: string, allowed: readonly T[], fallback: T): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const found = allowed.find((a) => a === raw.trim().toLowerCase());
  if (found === undefined) throw new ConfigError(`${name} must be one of ${allowed.join(', ')}, got '${raw}'`);
  return found;
}

/** The analytics settings; undefined when analytics is off (its other variables are checked all the same: a bad value stops the start). */
function analyticsConfig(env: NodeJS.ProcessEnv): AnalyticsConfig | undefined {
  const on = oneOf(env, 'KEYWARD_ANALYTICS', ['on', 'off'] as const, 'on') === 'on';
  const region = env.KEYWARD_REGION?.trim() || 'local';
  if (region.length > 64 || !/^[\w.-]+$/.test(region)) throw new ConfigError(`KEYWARD_REGION must be 1 to 64 letters, digits, '.', '_' or '-', got '${region}'`);
  const settings: AnalyticsConfig = {
    region,
    retentionDays: int(env, 'KEYWARD_ANALYTICS_RETENTION_DAYS', 30, 1, 3_650),
    queryTimeoutMs: int(env, 'KEYWARD_ANALYTICS_QUERY_TIMEOUT_MS', 30_000, 10, 600_000),
    memoryMb: int(env, 'KEYWARD_ANALYTICS_MEMORY_MB', 1_024, 64, 1_048_576),
    queriesPerHour: int(env, 'KEYWARD_ANALYTICS_QUERIES_PER_HOUR', 1_000, 1, 1_000_000_000),
    maxRows: int(env, 'KEYWARD_ANALYTICS_MAX_ROWS', 10_000, 1, 10_000_000),
    maxRowsRead: int(env, 'KEYWARD_ANALYTICS_MAX_ROWS_READ', 10_000_000, 1, 1e15),
    bufferBytes: int(env, 'KEYWARD_ANALYTICS_BUFFER_BYTES', 64 * 1024 * 1024, 4_096, 2 ** 34),
    priority: oneOf(env, 'KEYWARD_ANALYTICS_PRIORITY', ['idle', 'normal'] as const, 'idle'),
  };
  return on ? settings : undefined;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const host = env.KEYWARD_HOST?.trim() || '127.0.0.1';
  const port = int(env, 'KEYWARD_PORT', 8080, 0, 65535);
  const threads = int(env, 'KEYWARD_THREADS', 1, 1, 64);
  // The serving threads share one port (SO_REUSEPORT), but Linux does not share a port it
  // picked itself: with port 0 the second thread could not bind the first one's port.
  if (port === 0 && threads > 1) throw new ConfigError('KEYWARD_PORT=0 (any free port) needs KEYWARD_THREADS=1: the serving threads share one fixed port');
  const vaultKey = env.KEYWARD_VAULT_KEY?.trim() || undefined;
  // 32 bytes are 43 base64 characters and one '=' of padding (base64url's alphabet accepted
  // too); Node's decoder skips any other character, so the form is checked first.
  if (vaultKey !== undefined && (!/^[A-Za-z0-9+/_-]{43}=?$/.test(vaultKey) || Buffer.from(vaultKey, 'base64').length !== 32)) {
    throw new ConfigError('KEYWARD_VAULT_KEY must be 32 bytes, base64-encoded');
  }
  const rootKey = env.KEYWARD_ROOT_KEY?.trim() || undefined;
  if (rootKey !== undefined && (rootKey.length < 16 || rootKey.length > 512 || /\s/.test(rootKey))) {
    throw new ConfigError('KEYWARD_ROOT_KEY must be 16 to 512 characters without white space');
  }
  const durability = oneOf(env, 'KEYWARD_DURABILITY', ['process', 'disk'] as const, 'process');
  return Object.freeze({
    host,
    port,
    dataDir: env.KEYWARD_DATA_DIR?.trim() || './data',
    rootKey,
    durability,
    syncIntervalMs: int(env, 'KEYWARD_SYNC_INTERVAL_MS', 100, 0, 3_600_000),
    maxBodyBytes: int(env, 'KEYWARD_MAX_BODY_BYTES', 1024 * 1024, 64, 256 * 1024 * 1024),
    // uWebSockets.js itself closes a connection whose body stalls for about 8–10 s, without a
    // reply: a longer deadline could never answer its 408.
    requestTimeoutMs: int(env, 'KEYWARD_REQUEST_TIMEOUT_MS', 5_000, 10, MAX_REQUEST_TIMEOUT_MS),
    threads,
    vaultKey,
    logLevel: oneOf(env, 'KEYWARD_LOG_LEVEL', ['debug', 'info', 'warn', 'error', 'silent'] as const, 'info'),
    initialMapBytes: int(env, 'KEYWARD_MAP_BYTES', DEFAULT_MAP_BYTES, 64 * 1024, 2 ** 46),
    // Off by default: every flush of the writable map write-protects each page written since
    // the last one, with a TLB-flush interrupt to the serving core per page, and over HTTP
    // that cost more than the pwrite it saves, in both modes (docs/durability.md, Commit paths).
    writeMap: oneOf(env, 'KEYWARD_WRITE_MAP', ['on', 'off'] as const, 'off') === 'on',
    verifyCacheSlots: int(env, 'KEYWARD_VERIFY_CACHE', 131_072, 0, 16_777_216),
    publicUrl: publicUrl(env, host, port),
    postgresUrl: postgresUrl(env),
    nodeId: env.KEYWARD_NODE_ID?.trim() || `${hostname()}:${port}`,
    clusterLogKeep: int(env, 'KEYWARD_CLUSTER_LOG_KEEP', 1_000_000, 1, Number.MAX_SAFE_INTEGER),
    redisUrl: redisUrl(env),
    clusterCreditsOffline: oneOf(env, 'KEYWARD_CLUSTER_CREDITS_OFFLINE', ['refuse', 'allow'] as const, 'refuse'),
    clusterCreditsOfflineAllowance: int(env, 'KEYWARD_CLUSTER_CREDITS_OFFLINE_ALLOWANCE', 100, 0, Number.MAX_SAFE_INTEGER),
    clusterLeaseTtlMs: int(env, 'KEYWARD_CLUSTER_LEASE_TTL_MS', 60_000, 5_000, 86_400_000),
    clusterLeaseQuietMs: int(env, 'KEYWARD_CLUSTER_LEASE_QUIET_MS', 60_000, 1_000, 86_400_000),
    startCheckMs: int(env, 'KEYWARD_START_CHECK_MS', DEFAULT_START_CHECK_MS, 0, 3_600_000),
    analytics: analyticsConfig(env),
  });
}

/**
 * The public URL once the server has bound `port`: with KEYWARD_PORT=0 (the OS picks the
 * port) the default URL names the port bound, not :0; a configured URL stays as it is.
 */
export function boundPublicUrl(config: Config, port: number): string {
  return config.port === 0 && config.publicUrl.endsWith(':0') ? `${config.publicUrl.slice(0, -1)}${port}` : config.publicUrl;
}

/** `http://host:port` with an IPv6 host in brackets, as a URL names it. */
export function hostUrl(host: string, port: number): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** KEYWARD_POSTGRES_URL: a postgres:// or postgresql:// URL, or unset. */
function postgresUrl(env: NodeJS.ProcessEnv): string | undefined {
  const raw = env.KEYWARD_POSTGRES_URL?.trim();
  if (raw === undefined || raw === '') return undefined;
  const protocol = URL.canParse(raw) ? new URL(raw).protocol : undefined;
  if (protocol !== 'postgres:' && protocol !== 'postgresql:') throw new ConfigError(`KEYWARD_POSTGRES_URL must be a postgres:// URL, got a value that is not one`);
  return raw;
}

/** KEYWARD_REDIS_URL: a redis:// or rediss:// URL, or unset; only with KEYWARD_POSTGRES_URL. */
function redisUrl(env: NodeJS.ProcessEnv): string | undefined {
  const raw = env.KEYWARD_REDIS_URL?.trim();
  if (raw === undefined || raw === '') return undefined;
  const protocol = URL.canParse(raw) ? new URL(raw).protocol : undefined;
  if (protocol !== 'redis:' && protocol !== 'rediss:') throw new ConfigError('KEYWARD_REDIS_URL must be a redis:// or rediss:// URL, got a value that is not one');
  if (env.KEYWARD_POSTGRES_URL?.trim() === undefined || env.KEYWARD_POSTGRES_URL.trim() === '') throw new ConfigError('KEYWARD_REDIS_URL shares rate limits between the nodes of a cluster: set KEYWARD_POSTGRES_URL too');
  return raw;
}

/** KEYWARD_PUBLIC_URL (an absolute http(s) URL), else this server's own address. */
function publicUrl(env: NodeJS.ProcessEnv, host: string, port: number): string {
  const raw = env.KEYWARD_PUBLIC_URL?.trim();
  if (raw === undefined || raw === '') return hostUrl(host, port);
  const protocol = URL.canParse(raw) ? new URL(raw).protocol : undefined;
  if (protocol !== 'http:' && protocol !== 'https:') throw new ConfigError(`KEYWARD_PUBLIC_URL must be an absolute http(s) URL, got '${raw}'`);
  return raw.replace(/\/+$/, '');
}
