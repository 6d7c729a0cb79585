// keys.verifyKey under concurrency: two serving threads (KEYWARD_THREADS=2) share one LMDB
// environment; 2,000 concurrent verifications of a key with 500 credits over 64 keep-alive
// connections must admit exactly 500, each seeing a distinct balance.
import http from 'node:http';
import { describe, expect, it } from 'vitest';
import { liveServer } from '../helpers/live.js';
import { call, createApi, expectOk } from '../helpers/server.js';
import { postWithAgent } from '../helpers/agent.js';

const srv = liveServer({ env: { KEYWARD_THREADS: '2' } });

async function post(agent: http.Agent, url: string, rootKey: string, path: string, body: unknown): Promise<{ status: number; json: { data?: { valid: boolean; code: string; credits?: number } } }> {
  const { status, text } = await postWithAgent(agent, `${url}${path}`, rootKey, body);
  try {
    return { status, json: JSON.parse(text) as never };
  } catch (err) {
    throw new Error(`not JSON (${status}): ${text.slice(0, 200)}; ${(err as Error).message}`);
  }
}

describe('concurrent verifications', () => {
  it('2,000 concurrent verifications of a 500-credit key: exactly 500 VALID with balances 499…0, final balance 0', async () => {
    const s = srv();
    const apiId = await createApi(s);
    const { key, keyId } = expectOk(await call(s, 'keys.createKey', { apiId, credits: { remaining: 500 } })) as { key: string; keyId: string };
    const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
    try {
      const results = await Promise.all(Array.from({ length: 2_000 }, () => post(agent, s.url, s.rootKey, '/v2/keys.verifyKey', { key })));
      expect(results.filter((r) => r.status !== 200).map((r) => r.status)).toEqual([]);
      const codes = new Map<string, number>();
      for (const r of results) codes.set(r.json.data?.code ?? 'none', (codes.get(r.json.data?.code ?? 'none') ?? 0) + 1);
      expect(Object.fromEntries(codes)).toEqual({ VALID: 500, USAGE_EXCEEDED: 1_500 });
      const balances = results.filter((r) => r.json.data?.valid === true).map((r) => r.json.data?.credits as number).sort((a, b) => b - a);
      expect(balances).toEqual(Array.from({ length: 500 }, (_, i) => 499 - i));
      for (const r of results.filter((x) => x.json.data?.code === 'USAGE_EXCEEDED')) expect(r.json.data?.credits).toBe(0);
    } finally {
      agent.destroy();
    }
    expect(expectOk(await call(s, 'keys.getKey', { keyId })).credits.remaining).toBe(0);
  });

  it('credit increments racing verifications on both threads lose no update', async () => {
    const s = srv();
    const apiId = await createApi(s);
    const { key, keyId } = expectOk(await call(s, 'keys.createKey', { apiId, credits: { remaining: 300 } })) as { key: string; keyId: string };
    const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
    let valid = 0;
    try {
      const verifications = Array.from({ length: 1_000 }, () => post(agent, s.url, s.rootKey, '/v2/keys.verifyKey', { key }));
      const increments = Array.from({ length: 50 }, () => post(agent, s.url, s.rootKey, '/v2/keys.updateCredits', { keyId, operation: 'increment', value: 10 }));
      const [v, inc] = await Promise.all([Promise.all(verifications), Promise.all(increments)]);
      expect(inc.map((r) => r.status)).toEqual(Array<number>(50).fill(200));
      valid = v.filter((r) => r.json.data?.code === 'VALID').length;
      expect(v.every((r) => r.json.data?.code === 'VALID' || r.json.data?.code === 'USAGE_EXCEEDED')).toBe(true);
    } finally {
      agent.destroy();
    }
    expect(valid).toBeGreaterThanOrEqual(300);
    expect(expectOk(await call(s, 'keys.getKey', { keyId })).credits.remaining).toBe(300 + 500 - valid);
  });

  it('concurrent rate-limited verifications admit exactly the limit', async () => {
    const s = srv();
    const apiId = await createApi(s);
    const { key, keyId } = expectOk(await call(s, 'keys.createKey', {
      apiId,
      credits: { remaining: 10_000 },
      ratelimits: [{ name: 'hourly', limit: 100, duration: 3_600_000, autoApply: true }],
    })) as { key: string; keyId: string };
    const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
    let valid = 0;
    let limited = 0;
    const resets = new Set<number>();
    try {
      const results = await Promise.all(Array.from({ length: 600 }, () => post(agent, s.url, s.rootKey, '/v2/keys.verifyKey', { key })));
      for (const r of results) {
        const reset = (r.json.data as { ratelimits?: { reset: number }[] } | undefined)?.ratelimits?.[0]?.reset;
        if (reset !== undefined) resets.add(reset);
        if (r.json.data?.code === 'VALID') valid++;
        else if (r.json.data?.code === 'RATE_LIMITED') limited++;
      }
    } finally {
      agent.destroy();
    }
    expect(valid + limited).toBe(600);
    // All in one bucket (one `reset`): exactly the limit. Should the hour turn during the run,
    // the weighting lets at most one more window's worth through.
    if (resets.size === 1) expect(valid).toBe(100);
    else {
      expect(valid).toBeGreaterThanOrEqual(100);
      expect(valid).toBeLessThanOrEqual(200);
    }
    expect(expectOk(await call(s, 'keys.getKey', { keyId })).credits.remaining).toBe(10_000 - valid);
  });

  it('a key changed on one thread is answered anew by both (the verification cache follows every change)', async () => {
    const s = srv();
    const apiId = await createApi(s);
    const { key, keyId } = expectOk(await call(s, 'keys.createKey', { apiId })) as { key: string; keyId: string };
    const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
    const codes = async (): Promise<string[]> => [...new Set((await Promise.all(Array.from({ length: 300 }, () => post(agent, s.url, s.rootKey, '/v2/keys.verifyKey', { key })))).map((r) => r.json.data?.code ?? 'none'))];
    const hits = async (): Promise<number> => Number(/^keyward_verify_cache_hits_total (\d+)$/m.exec(await (await fetch(`${s.url}/metrics`)).text())?.[1]);
    try {
      const before = await hits();
      expect(await codes()).toEqual(['VALID']);
      expect(await hits()).toBeGreaterThan(before);
      for (const [enabled, code] of [[false, 'DISABLED'], [true, 'VALID'], [false, 'DISABLED']] as const) {
        expectOk(await call(s, 'keys.updateKey', { keyId, enabled }));
        expect(await codes()).toEqual([code]);
      }
    } finally {
      agent.destroy();
    }
  });
});
