// ratelimits.limit under concurrency: two serving threads (KEYWARD_THREADS=2) share one LMDB
// environment; concurrent calls over 64 keep-alive connections must never admit more than
// the limit (DESIGN.md §1 "Threads and processes": the engine stays correct under both).
import http from 'node:http';
import { describe, expect, it } from 'vitest';
import { liveServer } from '../helpers/live.js';
import { uniq } from '../helpers/ratelimits.js';
import { postWithAgent } from '../helpers/agent.js';

const srv = liveServer({ env: { KEYWARD_THREADS: '2' } });

interface Reply {
  status: number;
  data?: { success: boolean; limit: number; remaining: number; reset: number };
}

async function post(agent: http.Agent, url: string, rootKey: string, body: unknown): Promise<Reply> {
  const { status, text } = await postWithAgent(agent, `${url}/v2/ratelimit.limit`, rootKey, body);
  try {
    return { status, data: (JSON.parse(text) as { data?: Reply['data'] }).data };
  } catch (err) {
    throw new Error(`not JSON (${status}): ${text.slice(0, 200)}; ${(err as Error).message}`);
  }
}

/** Runs the calls with every request in flight at once over a 64-socket keep-alive pool. */
async function burst(bodies: unknown[]): Promise<Reply[]> {
  const s = srv();
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  try {
    return await Promise.all(bodies.map((b) => post(agent, s.url, s.rootKey, b)));
  } finally {
    agent.destroy();
  }
}

/** A duration whose current bucket has at least `marginMs` left (so the burst stays in one bucket). */
async function awayFromBoundary(durationMs: number, marginMs: number): Promise<void> {
  const left = durationMs - (Date.now() % durationMs);
  if (left < marginMs) await new Promise((r) => setTimeout(r, left + 50));
}

describe('concurrent rate limiting', () => {
  it('5,000 concurrent calls on one identifier with limit 1,000: exactly 1,000 admitted, each remaining seen once', async () => {
    const namespace = uniq('conc');
    await awayFromBoundary(60_000, 5_000);
    const body = { namespace, identifier: 'hot', limit: 1_000, duration: 60_000 };
    const results = await burst(Array.from({ length: 5_000 }, () => body));
    expect(results.filter((r) => r.status !== 200).map((r) => r.status)).toEqual([]);
    const admitted = results.filter((r) => r.data?.success === true);
    expect(admitted).toHaveLength(1_000);
    expect(admitted.map((r) => r.data?.remaining as number).sort((a, b) => a - b)).toEqual(Array.from({ length: 1_000 }, (_, i) => i));
    for (const r of results.filter((x) => x.data?.success === false)) expect(r.data?.remaining).toBe(0);
    expect(new Set(results.map((r) => r.data?.reset)).size).toBe(1);
  });

  it('4,000 calls over 200 identifiers with limit 10: none admitted more than 10 times', async () => {
    const namespace = uniq('conc');
    await awayFromBoundary(60_000, 5_000);
    // Shuffled so both threads and many connections interleave on each identifier.
    const bodies = Array.from({ length: 4_000 }, (_, i) => ({ namespace, identifier: `id-${i % 200}`, limit: 10, duration: 60_000 }));
    for (let i = bodies.length - 1; i > 0; i--) {
      const j = Math.floor(Math.random() * (i + 1));
      [bodies[i], bodies[j]] = [bodies[j] as (typeof bodies)[number], bodies[i] as (typeof bodies)[number]];
    }
    const results = await burst(bodies);
    expect(results.filter((r) => r.status !== 200).map((r) => r.status)).toEqual([]);
    const admitted = new Map<string, number>();
    results.forEach((r, i) => {
      if (r.data?.success === true) admitted.set(bodies[i]?.identifier ?? '', (admitted.get(bodies[i]?.identifier ?? '') ?? 0) + 1);
    });
    const over = [...admitted].filter(([, n]) => n > 10);
    expect(over).toEqual([]);
    // 20 calls each against a limit of 10 within one bucket: each gets exactly 10.
    expect(admitted.size).toBe(200);
    expect([...admitted.values()].every((n) => n === 10)).toBe(true);
  });
});
