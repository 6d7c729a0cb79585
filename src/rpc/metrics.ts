// Prometheus metrics shared by every serving thread: one SharedArrayBuffer holds a region
// of counters per thread; each thread adds to its own region only (plain writes, no
// Atomics, no BigInt per request) and any thread renders the sum over all regions.
//   keyward_requests_total{procedure,status}
//   keyward_request_duration_seconds{procedure} histogram (from when the serving thread takes
//   the request up to its reply: time spent queued behind other work on the thread is not in it)
//   keyward_store_used_bytes / keyward_store_map_bytes / keyward_store_entries
//   keyward_verify_cache_hits_total / keyward_verify_cache_misses_total
//   keyward_verifications_total{outcome} / keyward_ratelimit_decisions_total{passed} /
//   keyward_credits_spent_total (counted by the engine: native/src/decisions.rs)
//   keyward_accept_paused_total / keyward_descriptors_limit (http/uws.ts pauses accepting
//   when the process runs short of descriptors)
// Counters are float64: exact up to 2^53 requests.
import { dataDirFreeBytes } from '../errors/space.js';
import { BUCKETS_S } from '../domain/histogram.js';
import { native, type StoreStats } from '../engine/native.js';

const STATUSES = [200, 400, 401, 403, 404, 405, 408, 409, 410, 412, 413, 415, 422, 429, 500, 501, 503, 507] as const;
/** Status code → its slot (STATUSES.length for any other code); built once, only read. */
const STATUS_SLOT: Readonly<Int8Array> = (() => {
  const slots = new Int8Array(600).fill(STATUSES.length);
  STATUSES.forEach((s, i) => (slots[s] = i));
  return slots;
})();

export class Metrics {
  private readonly names: readonly string[];
  /** Slots of one thread's region: counts, histogram buckets, duration sums (µs), accept pauses. */
  private readonly regionSlots: number;
  private readonly all: Float64Array;
  private readonly own: Float64Array;
  private readonly histAt: number;
  private readonly sumAt: number;
  private readonly pausedAt: number;
  /** The process's soft limit of open descriptors, once the server knows it. */
  descriptorsLimit: number | undefined = undefined;

  /**
   * `names`: the procedures, in route-table order; one more slot counts everything else.
   * `threads` regions are allocated when `shared` is not given; `thread` is this thread's.
   */
  constructor(names: readonly string[], shared?: SharedArrayBuffer, thread = 0, threads = 1) {
    this.names = [...names, 'other'];
    const p = this.names.length;
    this.histAt = p * (STATUSES.length + 1);
    this.sumAt = this.histAt + p * (BUCKETS_S.length + 1);
    this.pausedAt = this.sumAt + p;
    this.regionSlots = this.pausedAt + 1;
    const buffer = shared ?? new SharedArrayBuffer(this.regionSlots * 8 * threads);
    this.all = new Float64Array(buffer);
    this.own = new Float64Array(buffer, thread * this.regionSlots * 8, this.regionSlots);
  }

  get buffer(): SharedArrayBuffer {
    return this.all.buffer as SharedArrayBuffer;
  }

  /** procIndex: route index, or -1 for requests that matched no procedure. */
  record(procIndex: number, status: number, seconds: number): void {
    const p = procIndex < 0 ? this.names.length - 1 : procIndex;
    this.add(p * (STATUSES.length + 1) + (STATUS_SLOT[status] ?? STATUSES.length), 1);
    let b = 0;
    while (b < BUCKETS_S.length && seconds > (BUCKETS_S[b] as number)) b++;
    this.add(this.histAt + p * (BUCKETS_S.length + 1) + b, 1);
    this.add(this.sumAt + p, Math.round(seconds * 1e6));
  }

  /** This thread stopped accepting connections for lack of descriptors. */
  acceptPaused(): void {
    this.add(this.pausedAt, 1);
  }

  private add(slot: number, n: number): void {
    this.own[slot] = (this.own[slot] as number) + n;
  }

  /** A slot summed over every thread's region. */
  private total(slot: number): number {
    let sum = 0;
    for (let at = slot; at < this.all.length; at += this.regionSlots) sum += this.all[at] as number;
    return sum;
  }

  render(store: StoreStats | undefined): string {
    const lines: string[] = [
      '# HELP keyward_requests_total Requests answered, by procedure and HTTP status.',
      '# TYPE keyward_requests_total counter',
    ];
    const statusLabels = [...STATUSES.map(String), 'other'];
    this.names.forEach((name, p) => {
      statusLabels.forEach((status, s) => {
        const v = this.total(p * (STATUSES.length + 1) + s);
        if (v > 0) lines.push(`keyward_requests_total{procedure="${name}",status="${status}"} ${v}`);
      });
    });
    lines.push('# HELP keyward_request_duration_seconds Time from when the serving thread takes the request up to its reply (not the time it waited for the thread).', '# TYPE keyward_request_duration_seconds histogram');
    this.names.forEach((name, p) => {
      let cumulative = 0;
      const rows: string[] = [];
      BUCKETS_S.forEach((le, b) => {
        cumulative += this.total(this.histAt + p * (BUCKETS_S.length + 1) + b);
        rows.push(`keyward_request_duration_seconds_bucket{procedure="${name}",le="${le}"} ${cumulative}`);
      });
      cumulative += this.total(this.histAt + p * (BUCKETS_S.length + 1) + BUCKETS_S.length);
      if (cumulative === 0) return;
      rows.push(`keyward_request_duration_seconds_bucket{procedure="${name}",le="+Inf"} ${cumulative}`);
      rows.push(`keyward_request_duration_seconds_sum{procedure="${name}"} ${this.total(this.sumAt + p) / 1e6}`);
      rows.push(`keyward_request_duration_seconds_count{procedure="${name}"} ${cumulative}`);
      lines.push(...rows);
    });
    lines.push('# HELP keyward_accept_paused_total Times a serving thread stopped accepting connections because the process was short of file descriptors.', '# TYPE keyward_accept_paused_total counter', `keyward_accept_paused_total ${this.total(this.pausedAt)}`);
    if (this.descriptorsLimit !== undefined) lines.push('# HELP keyward_descriptors_limit The soft limit of open file descriptors of the process.', '# TYPE keyward_descriptors_limit gauge', `keyward_descriptors_limit ${this.descriptorsLimit}`);
    lines.push(...decisionLines());
    if (store !== undefined) {
      const one = (name: string, type: 'gauge' | 'counter', help: string, value: number) => lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`, `${name} ${value}`);
      one('keyward_store_used_bytes', 'gauge', 'Bytes of the LMDB data file in use.', store.usedBytes);
      one('keyward_store_map_bytes', 'gauge', 'Current LMDB map size (grows when full).', store.mapBytes);
      one('keyward_store_entries', 'gauge', 'Records across all tables.', store.entries);
      const free = dataDirFreeBytes();
      if (free !== undefined) one('keyward_data_dir_free_bytes', 'gauge', "Bytes still free on the data dir's filesystem (writes answer 507 once it is full).", free);
      one('keyward_store_write_map', 'gauge', '1 when commits go through the writable map (KEYWARD_WRITE_MAP), 0 on pwrite.', store.writeMap ? 1 : 0);
      one('keyward_verify_cache_hits_total', 'counter', 'Verifications answered from the verification cache (KEYWARD_VERIFY_CACHE).', store.verifyCacheHits);
      one('keyward_verify_cache_misses_total', 'counter', 'Verifications of the kind the cache keeps that were computed in full (not kept yet, or a record changed since).', store.verifyCacheMisses);
      one('keyward_verify_cache_record_hits_total', 'counter', "Verifications computed in full that read the key's record from the verification cache.", store.verifyCacheRecordHits);
      one('keyward_verify_cache_record_misses_total', 'counter', 'Verifications computed in full that read the key table (not cached yet, a record changed since, or an unknown key).', store.verifyCacheRecordMisses);
    }
    return lines.join('\n') + '\n';
  }
}

/**
 * What the hot calls decided since the process started, counted by the engine for every
 * answered call (with analytics on or off): verifications by outcome, rate-limit decisions
 * (a multiLimit's limits one each), credits spent.
 */
function decisionLines(): string[] {
  const { outcomes, passed, refused, creditsSpent } = native.decisionCounts();
  return [
    '# HELP keyward_verifications_total keys.verifyKey answers, by outcome (code).',
    '# TYPE keyward_verifications_total counter',
    ...Object.entries(outcomes).map(([outcome, n]) => `keyward_verifications_total{outcome="${outcome}"} ${n}`),
    '# HELP keyward_ratelimit_decisions_total Rate-limit decisions of ratelimits.limit and multiLimit (each limit of a multiLimit), passed or not.',
    '# TYPE keyward_ratelimit_decisions_total counter',
    `keyward_ratelimit_decisions_total{passed="true"} ${passed}`,
    `keyward_ratelimit_decisions_total{passed="false"} ${refused}`,
    '# HELP keyward_credits_spent_total Credits spent by VALID verifications of keys with credits.',
    '# TYPE keyward_credits_spent_total counter',
    `keyward_credits_spent_total ${creditsSpent}`,
  ];
}
