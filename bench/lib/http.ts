// Calls to a keyward under bench over HTTP (fetch), for setting it up and sampling it.

export async function post(base: string, rootKey: string, procedure: string, body: unknown): Promise<{ status: number; data: Record<string, unknown> }> {
  const res = await fetch(`${base}/v2/${procedure}`, { method: 'POST', headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${rootKey}` }, body: JSON.stringify(body) });
  const json = (await res.json()) as { data: Record<string, unknown> };
  return { status: res.status, data: json.data };
}

/** Creates `count` keys (1,000,000,000 credits unless `credits` is false, an autoApply limit of 1,000,000,000 a minute) over HTTP, 16 at a time; their key strings. */
export async function createKeys(base: string, rootKey: string, apiId: string, count: number, credits = true): Promise<string[]> {
  const out: string[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < count) {
        next++;
        const r = await post(base, rootKey, 'keys.createKey', { apiId, ...(credits ? { credits: { remaining: 1_000_000_000 } } : {}), ratelimits: [{ name: 'requests', limit: 1_000_000_000, duration: 60_000, autoApply: true }] });
        if (r.status !== 200) throw new Error(`createKey: ${r.status}`);
        out.push(r.data.key as string);
      }
    }),
  );
  return out;
}

/** The /metrics text of the keyward at `base` (once more on a failure: fetch may reuse a connection the server closed while idle, 10 s). */
export function metricsText(base: string): Promise<string> {
  return fetch(`${base}/metrics`)
    .catch(() => fetch(`${base}/metrics`))
    .then((r) => r.text());
}

/** The plain samples of the keyward at `base`'s /metrics, read once: name → value (NaN when absent). */
export async function readMetrics(base: string): Promise<(name: string) => number> {
  const text = await metricsText(base);
  return (name) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
}

/**
 * What a keyward with analytics on did with its events over a run (its /metrics), once what
 * it buffered is written (10 s at most): an on ÷ off ratio bought by dropping events shows
 * here, and how far behind ingestion was at the end.
 */
export async function analyticsLine(name: string, base: string): Promise<string> {
  let m = await readMetrics(base);
  for (const until = Date.now() + 10_000; m('keyward_analytics_buffered_bytes') > 0 && Date.now() < until; m = await readMetrics(base)) await new Promise((r) => setTimeout(r, 200));
  const n = (metric: string): string => m(`keyward_analytics_events_${metric}_total`).toLocaleString('en-US');
  return `analytics events of ${name}: ${n('recorded')} recorded, ${n('written')} written, ${n('dropped')} dropped, ${n('failed')} failed; ${m('keyward_analytics_buffered_bytes').toLocaleString('en-US')} bytes still buffered`;
}
