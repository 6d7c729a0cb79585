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
