// Prometheus metrics shared by every serving thread: counters live in one
// SharedArrayBuffer (Atomics on BigInt64 slots), so any thread can render the totals.
//   keyward_requests_total{procedure,status}
//   keyward_request_duration_seconds{procedure} histogram (from first byte to reply)
//   keyward_store_used_bytes / keyward_store_map_bytes / keyward_store_entries
import type { StoreStats } from '../engine/native.js';

const STATUSES = [200, 400, 401, 403, 404, 405, 408, 409, 410, 412, 413, 415, 429, 500, 501, 503] as const;
const BUCKETS_S = [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10];

export class Metrics {
  private readonly names: readonly string[];
  private readonly counts: BigInt64Array;
  private readonly hist: BigInt64Array;
  private readonly sumsUs: BigInt64Array;
  private readonly statusIndex = new Map<number, number>(STATUSES.map((s, i) => [s, i]));

  /** `names`: the procedures, in route-table order; one more slot counts everything else. */
  constructor(names: readonly string[], shared?: SharedArrayBuffer) {
    this.names = [...names, 'other'];
    const p = this.names.length;
    const slots = p * (STATUSES.length + 1) + p * (BUCKETS_S.length + 1) + p;
    const buffer = shared ?? new SharedArrayBuffer(slots * 8);
    let at = 0;
    this.counts = new BigInt64Array(buffer, at, p * (STATUSES.length + 1));
    at += this.counts.byteLength;
    this.hist = new BigInt64Array(buffer, at, p * (BUCKETS_S.length + 1));
    at += this.hist.byteLength;
    this.sumsUs = new BigInt64Array(buffer, at, p);
  }

  get buffer(): SharedArrayBuffer {
    return this.counts.buffer as SharedArrayBuffer;
  }

  /** procIndex: route index, or -1 for requests that matched no procedure. */
  record(procIndex: number, status: number, seconds: number): void {
    const p = procIndex < 0 ? this.names.length - 1 : procIndex;
    const s = this.statusIndex.get(status) ?? STATUSES.length;
    Atomics.add(this.counts, p * (STATUSES.length + 1) + s, 1n);
    let b = 0;
    while (b < BUCKETS_S.length && seconds > (BUCKETS_S[b] ?? Infinity)) b++;
    Atomics.add(this.hist, p * (BUCKETS_S.length + 1) + b, 1n);
    Atomics.add(this.sumsUs, p, BigInt(Math.round(seconds * 1e6)));
  }

  render(store: StoreStats | undefined): string {
    const lines: string[] = [
      '# HELP keyward_requests_total Requests answered, by procedure and HTTP status.',
      '# TYPE keyward_requests_total counter',
    ];
    const statusLabels = [...STATUSES.map(String), 'other'];
    this.names.forEach((name, p) => {
      statusLabels.forEach((status, s) => {
        const v = Atomics.load(this.counts, p * (STATUSES.length + 1) + s);
        if (v > 0n) lines.push(`keyward_requests_total{procedure="${name}",status="${status}"} ${v}`);
      });
    });
    lines.push('# HELP keyward_request_duration_seconds Time from request start to reply.', '# TYPE keyward_request_duration_seconds histogram');
    this.names.forEach((name, p) => {
      let cumulative = 0n;
      const rows: string[] = [];
      BUCKETS_S.forEach((le, b) => {
        cumulative += Atomics.load(this.hist, p * (BUCKETS_S.length + 1) + b);
        rows.push(`keyward_request_duration_seconds_bucket{procedure="${name}",le="${le}"} ${cumulative}`);
      });
      cumulative += Atomics.load(this.hist, p * (BUCKETS_S.length + 1) + BUCKETS_S.length);
      if (cumulative === 0n) return;
      rows.push(`keyward_request_duration_seconds_bucket{procedure="${name}",le="+Inf"} ${cumulative}`);
      rows.push(`keyward_request_duration_seconds_sum{procedure="${name}"} ${Number(Atomics.load(this.sumsUs, p)) / 1e6}`);
      rows.push(`keyward_request_duration_seconds_count{procedure="${name}"} ${cumulative}`);
      lines.push(...rows);
    });
    if (store !== undefined) {
      lines.push(
        '# HELP keyward_store_used_bytes Bytes of the LMDB data file in use.',
        '# TYPE keyward_store_used_bytes gauge',
        `keyward_store_used_bytes ${store.usedBytes}`,
        '# HELP keyward_store_map_bytes Current LMDB map size (grows when full).',
        '# TYPE keyward_store_map_bytes gauge',
        `keyward_store_map_bytes ${store.mapBytes}`,
        '# HELP keyward_store_entries Records across all tables.',
        '# TYPE keyward_store_entries gauge',
        `keyward_store_entries ${store.entries}`,
        '# HELP keyward_store_write_map 1 when commits go through the writable map (KEYWARD_WRITE_MAP), 0 on pwrite.',
        '# TYPE keyward_store_write_map gauge',
        `keyward_store_write_map ${store.writeMap ? 1 : 0}`,
      );
    }
    return lines.join('\n') + '\n';
  }
}
