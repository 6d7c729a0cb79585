// Duration histograms for /metrics (Prometheus buckets, in seconds): the request durations
// (src/rpc/metrics.ts) and how long hot calls waited for the cluster (src/cluster/settle.ts).

export const BUCKETS_S: readonly number[] = [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10];

/** One thread's histogram of durations, over the same buckets as the request durations. */
export class Histogram {
  private readonly counts = new Float64Array(BUCKETS_S.length + 1);
  private sum = 0;

  record(seconds: number): void {
    let b = 0;
    while (b < BUCKETS_S.length && seconds > (BUCKETS_S[b] as number)) b++;
    this.counts[b] = (this.counts[b] as number) + 1;
    this.sum += seconds;
  }

  /** The Prometheus rows of `name` with `labels` (`k="v"`), none while nothing was recorded. */
  rows(name: string, labels: string): string[] {
    let cumulative = 0;
    const rows = BUCKETS_S.map((le, b) => `${name}_bucket{${labels},le="${le}"} ${(cumulative += this.counts[b] as number)}`);
    cumulative += this.counts[BUCKETS_S.length] as number;
    if (cumulative === 0) return [];
    return [...rows, `${name}_bucket{${labels},le="+Inf"} ${cumulative}`, `${name}_sum{${labels}} ${this.sum}`, `${name}_count{${labels}} ${cumulative}`];
  }
}
