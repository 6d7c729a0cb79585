// Analytics on a live node (docs/analytics.md, "Events"): verifications open-loop at a
// fixed rate (default 20,000/s), and meanwhile, every 100 ms, analytics.getVerifications asks
// for the newest event it can see. The age of that event when the answer arrives bounds how
// long an answered verification waits before a query sees it; its p99 over the run is the
// figure. After the run, every event recorded must be in the table (none lost).
//   npm run bench:analytics-lag [-- --rate 20000 --duration 30 --keys 10000]
import { createKeys, post, readMetrics } from './lib/http.js';
import { rawPost, runOpenLoop } from './lib/openLoop.js';
import { startKeyward } from './lib/procs.js';
import { arg } from './lib/report.js';

const rate = arg('rate', 20_000);
const durationS = arg('duration', 30);
const keyCount = arg('keys', 10_000);
const POLL_MS = arg('poll', 100);
/** --analytics 0: the same verifications with analytics off (their latency without it; nothing is polled). */
const on = arg('analytics', 1) !== 0;

const keyward = await startKeyward({ KEYWARD_ANALYTICS: on ? 'on' : 'off' });
const base = `http://127.0.0.1:${keyward.port}`;
try {
  const apiId = (await post(base, keyward.rootKey, 'apis.createApi', { name: 'analytics-lag' })).data.apiId as string;
  process.stderr.write(`creating ${keyCount.toLocaleString('en-US')} keys…\n`);
  const keys = await createKeys(base, keyward.rootKey, apiId, keyCount);
  const query = async (sql: string): Promise<Record<string, unknown>> => {
    const r = await post(base, keyward.rootKey, 'analytics.getVerifications', { query: sql });
    if (r.status !== 200) throw new Error(`analytics.getVerifications answered ${r.status}`);
    return ((r.data as unknown as Record<string, unknown>[])[0] ?? {}) as Record<string, unknown>;
  };
  const where = `key_space_id = '${apiId}'`;

  const ages: number[] = [];
  let running = on;
  const polling = (async () => {
    while (running) {
      const sent = Date.now();
      const row = await query(`SELECT max(time) AS newest FROM key_verifications_v1 WHERE ${where}`);
      const answered = Date.now();
      if (typeof row.newest === 'number' && row.newest > 0) ages.push(answered - row.newest);
      await new Promise((r) => setTimeout(r, Math.max(0, POLL_MS - (answered - sent))));
    }
  })();
  let drawn = 0;
  const auth = `Bearer ${keyward.rootKey}`;
  process.stderr.write(`verifying at ${rate.toLocaleString('en-US')}/s for ${durationS} s…\n`);
  const run = await runOpenLoop({ port: keyward.port, rate, durationS, warmupS: 2, connections: 32, next: () => rawPost('/v2/keys.verifyKey', JSON.stringify({ key: keys[drawn++ % keys.length] }), auth) });
  running = false;
  await polling;
  // Samples from the first seconds (before the first batch after the warm-up) say nothing.
  const measured = ages.slice(Math.ceil(2_000 / POLL_MS)).sort((a, b) => a - b);
  const pct = (p: number): number => measured[Math.min(measured.length - 1, Math.floor((p / 100) * measured.length))] ?? NaN;

  // Every verification recorded (warm-up included) reaches the table.
  const recorded = on ? (await readMetrics(base))('keyward_analytics_events_recorded_total') : 0;
  let stored = 0;
  const until = Date.now() + 10_000;
  while (on && Date.now() < until) {
    stored = Number((await query(`SELECT count(*) AS n FROM key_verifications_v1`)).n ?? 0);
    if (stored >= recorded) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  const metric = await readMetrics(base);
  process.stdout.write(
    [
      `analytics freshness on a live node${on ? '' : ' (KEYWARD_ANALYTICS=off: verifications only)'}: keys.verifyKey open-loop at ${rate.toLocaleString('en-US')}/s for ${durationS} s (after 2 s of warm-up) over ${keyCount.toLocaleString('en-US')} keys; analytics.getVerifications every ${POLL_MS} ms; keyward threads=1`,
      '',
      '| | |',
      '|---|---|',
      `| verifications: sent / answered per second, p99 latency | ${Math.round(run.sentRps).toLocaleString('en-US')} / ${Math.round(run.completedRps).toLocaleString('en-US')}, ${run.p99Ms.toFixed(1)} ms |`,
      `| age of the newest queryable event, ${measured.length} queries: p50 / p99 / max | ${pct(50)} / ${pct(99)} / ${measured.at(-1) ?? NaN} ms |`,
      `| events recorded / in the table after the run | ${recorded.toLocaleString('en-US')} / ${stored.toLocaleString('en-US')} |`,
      `| events dropped / failed (metrics) | ${metric('keyward_analytics_events_dropped_total')} / ${metric('keyward_analytics_events_failed_total')} |`,
    ].join('\n') + '\n',
  );
} finally {
  await keyward.stop();
}
