// Rate-limit windows shared by the nodes through Redis (KEYWARD_REDIS_URL; docs/cluster.md,
// "Rate limits"). Redis grants admissions before they are made (native/src/shared.rs):
//  - a call with no grant left here is decided by Redis (`sync`: the Lua `check` per window,
//    all or nothing for the call), which counts it and a share of what is left for this
//    node's next calls, and the call is made again;
//  - far from a limit, calls are admitted ahead of Redis (within a 64th of what it leaves);
//  - every FLUSH_MS, one pipeline pushes what was admitted ahead of Redis (or while it was
//    away) and asks for a grant for the calls to come, gives back grants unused for a while,
//    and reads the other nodes' counts of windows refusing here (`flush`: windowsDrain → Lua
//    `push` per bucket → windowsLearn);
//  - Redis away: each node keeps within its share of every limit (limit ÷ live nodes, live
//    nodes from the heartbeats in PostgreSQL), and counts are shared again as soon as the
//    client reconnects (it tries every second at most).
import { Redis } from 'ioredis';
import type { HotCalls } from '../engine/hotCalls.js';
import { native } from '../engine/native.js';
import type { Logger } from '../log.js';
import type { Postgres } from './postgres.js';

/** How often this node's counts are pushed and the cluster's read back. */
const FLUSH_MS = 50;
/**
 * How often the live nodes are counted from their heartbeats in PostgreSQL, and how often a
 * node tells Redis it is live and counts those that did in the last LIVE_S (a sorted set): the
 * larger count is the cluster's, so nodes starting together know one another within PRESENT_MS.
 */
const NODES_POLL_MS = 2_000;
const PRESENT_MS = 250;
/** A node is live while its heartbeat (every 2 s) is younger than this. */
const LIVE_S = 10;

/** A window a call needs Redis to decide (native/src/api/hot.rs need_windows). */
export interface SyncWindow {
  /** The counter's name, hex. */
  readonly key: string;
  readonly seq: number;
  readonly duration: number;
  readonly limit: number;
  readonly cost: number;
  /** The previous bucket's weight numerator at the call's time (of `duration`). */
  readonly weight: number;
}

// What the scripts share. (Lua: HGET's and HMGET's missing field is false.)
//  get: a field of a bucket (`t` its count, this node's field its part); others: the
//  bucket's count less this node's part;
//  count: adds n to the bucket's count and to this node's part;
//  used: window.rs's count of the window, a bucket's count plus `add` and the weighted one before;
//  share: the grant of what is left, (limit − used) ÷ (4 × live nodes).
const LIB = `
local function get(key, field)
  return tonumber(redis.call('HGET', key, field) or '0')
end
local function others(key, field)
  local v = redis.call('HMGET', key, 't', field)
  return tonumber(v[1] or '0') - tonumber(v[2] or '0')
end
local function count(key, field, n, ttl)
  if n ~= 0 then
    redis.call('HINCRBY', key, 't', n)
    redis.call('HINCRBY', key, field, n)
    redis.call('PEXPIRE', key, ttl)
  end
end
local function used(key, before, add, weight, duration)
  return get(key, 't') + add + math.floor(get(before, 't') * weight / duration)
end
local function share(limit, used, nodes)
  return math.floor((limit - used) / (4 * nodes))
end`;

// KEYS: the bucket, the bucket before. ARGV: this node's field, its admissions to add, its
// unused grant to take off, the TTL (ms), the limit to grant admissions of (0: none), the
// previous bucket's weight, duration, live nodes. → {the other nodes' count in the bucket, in
// the one before, the grant}
const PUSH = `${LIB}
local add = tonumber(ARGV[2])
local back = math.min(tonumber(ARGV[3]), get(KEYS[1], ARGV[1]))
local limit = tonumber(ARGV[5])
local grant = 0
if limit > 0 then
  local u = used(KEYS[1], KEYS[2], add, tonumber(ARGV[6]), tonumber(ARGV[7]))
  if u < limit then grant = share(limit, u, tonumber(ARGV[8])) end
end
count(KEYS[1], ARGV[1], add - back + grant, ARGV[4])
return {others(KEYS[1], ARGV[1]), others(KEYS[2], ARGV[1]), grant}`;

// window.rs's decision on the cluster's count; admitted, it counts a grant for this node:
// the cost and a share of what is left, (limit − count) ÷ (4 × live nodes). KEYS: the bucket,
// the bucket before. ARGV: this node's field, its pending admissions, cost, limit, weight,
// duration, TTL (ms), live nodes. → {the grant (0: refused), the other nodes' count in the
// bucket, in the one before}
const CHECK = `${LIB}
local pending = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local limit = tonumber(ARGV[4])
local u = used(KEYS[1], KEYS[2], pending, tonumber(ARGV[5]), tonumber(ARGV[6]))
local grant = 0
if limit > 0 and u + cost <= limit then
  grant = math.max(cost, share(limit, u, tonumber(ARGV[8])))
end
count(KEYS[1], ARGV[1], pending + grant, ARGV[7])
return {grant, others(KEYS[1], ARGV[1]), others(KEYS[2], ARGV[1])}`;

// Takes back a grant no call will take (its call was refused by another window). KEYS: the
// bucket. ARGV: this node's field, the amount, the TTL (ms).
const RELEASE = `${LIB}
local back = math.min(tonumber(ARGV[2]), get(KEYS[1], ARGV[1]))
count(KEYS[1], ARGV[1], -back, ARGV[3])
return back`;

interface Scripts {
  kwPush(cur: string, prev: string, node: string, add: number, back: number, ttlMs: number, limit: number, weight: number, duration: number, nodes: number): Promise<[number, number, number]>;
  kwCheck(cur: string, prev: string, node: string, pending: number, cost: number, limit: number, weight: number, duration: number, ttlMs: number, nodes: number): Promise<[number, number, number]>;
  kwRelease(key: string, node: string, amount: number, ttlMs: number): Promise<number>;
}

const DRAINED_BYTES = 56;
const BUCKET_BYTES = 40;
const LEARNT_BYTES = 56;

export class ClusterWindows {
  private readonly redis: Redis & Scripts;
  private prefix = 'kw:';
  /** `kw:<cluster id>`. */
  private cluster = 'kw:';
  /** This node's field in a bucket's hash. */
  private readonly node: string;
  /** Redis reachable: windows are shared; else each node keeps to its share. */
  private up = false;
  /** Set by stop: the connection closing then is this node's doing. */
  private stopping = false;
  /** Live nodes as PostgreSQL's heartbeats and Redis's presence set count them. */
  private pgNodes = 1;
  private redisNodes = 1;
  private flushing = false;
  private timers: NodeJS.Timeout[] = [];
  /** Redis commands sent (for the bench's count per call). */
  commands = 0;

  constructor(
    url: string,
    /** This thread's hot calls, told how windows are counted. */
    private readonly hot: HotCalls,
    private readonly pg: Postgres,
    nodeId: string,
    private readonly log: Logger,
  ) {
    this.node = `n:${nodeId}`;
    this.redis = new Redis(url, {
      lazyConnect: true,
      // A command while Redis is away fails at once (the node decides alone) instead of waiting.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      connectTimeout: 1_000,
      commandTimeout: 1_000,
      retryStrategy: (times) => Math.min(100 * times, 1_000),
    }) as Redis & Scripts;
    this.redis.defineCommand('kwPush', { numberOfKeys: 2, lua: PUSH });
    this.redis.defineCommand('kwCheck', { numberOfKeys: 2, lua: CHECK });
    this.redis.defineCommand('kwRelease', { numberOfKeys: 1, lua: RELEASE });
    this.redis.on('ready', () => this.reachable(true));
    this.redis.on('close', () => this.reachable(false));
    this.redis.on('error', () => undefined);
  }

  get healthy(): boolean {
    return this.up;
  }

  /** Starts counting with the other nodes (Redis away: each within its share until it is back). */
  async start(clusterId: string): Promise<void> {
    this.cluster = `kw:${clusterId}`;
    this.prefix = `${this.cluster}:w:`;
    await this.countNodes();
    this.tell();
    await this.redis.connect().catch((err: unknown) => this.log.warn('Redis is unreachable: each node keeps within its share of every rate limit until it is back', { error: (err as Error).message }));
    await this.present();
    const flush = setInterval(() => void this.flush(), FLUSH_MS);
    const nodes = setInterval(() => void this.countNodes().then(() => this.tell()), NODES_POLL_MS);
    const present = setInterval(() => void this.present(), PRESENT_MS);
    this.timers = [flush, nodes, present];
    this.timers.forEach((t) => t.unref());
  }

  async stop(): Promise<void> {
    this.timers.forEach((t) => clearInterval(t));
    await this.flush();
    // Closed by this node, not lost: no warning that Redis is unreachable.
    this.stopping = true;
    this.redis.disconnect();
  }

  private reachable(up: boolean): void {
    if (up === this.up || this.stopping) return;
    this.up = up;
    if (up) this.log.info('Redis is reachable: rate-limit windows are shared again');
    else this.log.warn('Redis is unreachable: each node keeps within its share of every rate limit until it is back');
    this.tell();
  }

  private get nodes(): number {
    return Math.max(this.pgNodes, this.redisNodes);
  }

  private tell(): void {
    this.hot.countWindows(this.up ? 'shared' : 'split', this.nodes);
  }

  /** Tells Redis this node is live, and counts the nodes that did in the last LIVE_S. */
  private async present(): Promise<void> {
    if (!this.up) return;
    const now = Date.now();
    const key = `${this.cluster}:nodes`;
    this.commands++;
    const res = await this.redis.pipeline().zadd(key, now, this.node).zremrangebyscore(key, 0, now - LIVE_S * 1_000).zcard(key).pexpire(key, 2 * LIVE_S * 1_000).exec().catch(() => undefined);
    const counted = res?.[2]?.[1];
    if (typeof counted === 'number' && counted !== this.redisNodes) {
      this.redisNodes = Math.max(1, counted);
      this.tell();
    }
  }

  private async countNodes(): Promise<void> {
    const rows = await this.pg.query<{ n: number }>(`SELECT count(*)::int AS n FROM kw_nodes WHERE seen_at > now() - interval '${LIVE_S} seconds'`).catch(() => undefined);
    if (rows !== undefined) this.pgNodes = Math.max(1, rows[0]?.n ?? 1);
  }

  private bucket(key: string, seq: number): string {
    return `${this.prefix}${key}:${seq}`;
  }

  /**
   * Has Redis check a call's windows and grant admissions for them, all or nothing (a
   * refusal takes back the others' grants), and tells the engine what it said: the call,
   * made again, takes from the grants. The buckets are the call's until it answered:
   * `release` them then (when this returns true). Redis away: the engine is told to decide
   * alone (within its share).
   */
  async sync(windows: readonly SyncWindow[]): Promise<boolean> {
    if (!this.up) return false;
    const buckets = bucketRecords(windows);
    // What this node admitted while Redis was away goes with the checks.
    const pending = native.windowsTake(buckets);
    let results: [number, number, number][];
    try {
      this.commands += windows.length;
      results = await Promise.all(windows.map((w, i) => this.redis.kwCheck(this.bucket(w.key, w.seq), this.bucket(w.key, w.seq - 1), this.node, Number(pending.readBigInt64LE(i * 8)), w.cost, w.limit, w.weight, w.duration, ttl(w.duration), this.nodes)));
    } catch {
      this.reachable(false);
      return true;
    }
    const refused = results.some((r) => r[0] === 0);
    const learnt = Buffer.alloc(windows.length * LEARNT_BYTES);
    windows.forEach((w, i) => {
      const [grant, others, previous] = results[i] as [number, number, number];
      if (refused && grant > 0) void this.takeBack(w.key, w.seq, grant, w.duration);
      const at = i * LEARNT_BYTES;
      Buffer.from(w.key, 'hex').copy(learnt, at);
      [w.seq, w.duration, others, previous, refused ? 0 : grant].forEach((v, j) => learnt.writeBigInt64LE(BigInt(v), at + 16 + j * 8));
    });
    native.windowsLearn(learnt, Date.now());
    return true;
  }

  /** Makes a call again after `sync` granted its windows: it may take from the grants other calls wait for. */
  afterGrant<T>(call: () => T): T {
    return this.hot.afterGrant(call);
  }

  /** Makes a call again with its windows decided by this node alone, within its share (as while Redis is away). */
  alone<T>(call: () => T): T {
    return this.hot.alone(call);
  }

  /** The call `sync` checked `windows` for answered (its grants are no longer kept for it). */
  release(windows: readonly SyncWindow[]): void {
    native.windowsRelease(bucketRecords(windows));
  }

  private async takeBack(key: string, seq: number, amount: number, duration: number): Promise<void> {
    this.commands++;
    await this.redis.kwRelease(this.bucket(key, seq), this.node, amount, ttl(duration)).catch(() => undefined);
  }

  /** Pushes admissions Redis has not counted (and asks for grants), gives back unused grants, and learns the other nodes' counts. */
  private async flush(): Promise<void> {
    if (!this.up || this.flushing) return;
    this.flushing = true;
    try {
      const now = Date.now();
      const drained = native.windowsDrain(now);
      const count = drained.length / DRAINED_BYTES;
      if (count === 0) return;
      const pipeline = this.redis.pipeline() as ReturnType<Redis['pipeline']> & { kwPush(...args: unknown[]): unknown };
      const buckets: [string, number, number][] = [];
      for (let i = 0; i < count; i++) {
        const at = i * DRAINED_BYTES;
        const key = drained.toString('hex', at, at + 16);
        const [seq, duration, pending, back, grantOf] = [0, 1, 2, 3, 4].map((j) => Number(drained.readBigInt64LE(at + 16 + j * 8))) as [number, number, number, number, number];
        buckets.push([key, seq, duration]);
        // The previous bucket's weight now (window.rs weight: what is left of this bucket).
        const weight = Math.max(0, (seq + 1) * duration - now);
        pipeline.kwPush(this.bucket(key, seq), this.bucket(key, seq - 1), this.node, pending, back, ttl(duration), grantOf, weight, duration, this.nodes);
      }
      this.commands += count;
      // What could not be pushed (Redis went away) is lost to the other nodes' counts: one batch.
      const results = (await pipeline.exec()) ?? [];
      const learnt = Buffer.alloc(count * LEARNT_BYTES);
      let n = 0;
      results.forEach(([err, value], i) => {
        if (err !== null) return;
        const [key, seq, duration] = buckets[i] as [string, number, number];
        const [others, previous, grant] = value as [number, number, number];
        const at = n++ * LEARNT_BYTES;
        Buffer.from(key, 'hex').copy(learnt, at);
        [seq, duration, others, previous, grant].forEach((v, j) => learnt.writeBigInt64LE(BigInt(v), at + 16 + j * 8));
      });
      native.windowsLearn(learnt.subarray(0, n * LEARNT_BYTES), Date.now());
    } catch {
      // Redis went away mid-batch: `close` switches the node to its share.
    } finally {
      this.flushing = false;
    }
  }
}

/** The records `name(16) seq duration cost` (i64 LE) of a call's windows. */
function bucketRecords(windows: readonly SyncWindow[]): Buffer {
  const out = Buffer.alloc(windows.length * BUCKET_BYTES);
  windows.forEach((w, i) => {
    Buffer.from(w.key, 'hex').copy(out, i * BUCKET_BYTES);
    out.writeBigInt64LE(BigInt(w.seq), i * BUCKET_BYTES + 16);
    out.writeBigInt64LE(BigInt(w.duration), i * BUCKET_BYTES + 24);
    out.writeBigInt64LE(BigInt(w.cost), i * BUCKET_BYTES + 32);
  });
  return out;
}

/** A bucket's key lives two windows after its last push (the next bucket weighs it). */
function ttl(durationMs: number): number {
  return 2 * durationMs + 1_000;
}
