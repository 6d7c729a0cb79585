// Seeded data for benches, written with the real management code straight into the store
// (the bench process opens the same LMDB environment as the server it measures: LMDB is
// multi-process safe). Key strings are kept only in the bench's memory / temp files.
import { native } from '../../src/engine/native.js';
import { HotCalls, isNeed } from '../../src/engine/hotCalls.js';
import { DEFAULT_MAP_BYTES } from '../../src/config.js';
import { Principal } from '../../src/auth/permissions.js';
import { createKey, type CreateKeyInput } from '../../src/procedures/keys/createKey.js';
import type { Ctx } from '../../src/request/context.js';
import { directCtx } from '../../src/request/direct.js';
import { getRecord } from '../../src/store/db.js';
import type { ApiRecord } from '../../src/store/records.js';
import { post } from './http.js';
import { benchTempDir, startKeyward } from './procs.js';

/** Opens a store (a server's, while it runs: LMDB is multi-process safe) with the server's default map size. */
export function openStore(dataDir: string): void {
  native.open(dataDir, false, 0, DEFAULT_MAP_BYTES);
}

export function benchCtx(apiId: string): Ctx {
  const api = getRecord<ApiRecord>('apis', apiId);
  if (api === undefined) throw new Error(`API ${apiId} not found in the store`);
  return directCtx(new Principal(api.workspaceId, 'rk_bench', ['*']), Date.now());
}

/** Creates `count` keys through keys.createKey's handler; returns their key strings. */
export async function seedKeys(apiId: string, count: number, shape: Omit<CreateKeyInput, 'apiId' | 'byteLength' | 'enabled' | 'recoverable'>, onProgress?: (done: number) => void): Promise<string[]> {
  const ctx = benchCtx(apiId);
  const keys: string[] = [];
  for (let i = 0; i < count; i++) {
    keys.push((await createKey({ apiId, byteLength: 16, enabled: true, recoverable: false, ...shape }, ctx)).key);
    if (onProgress !== undefined && (i + 1) % 10_000 === 0) onProgress(i + 1);
  }
  return keys;
}

/** Credits and one autoApply limit, both large enough never to refuse during a bench. */
export const LIMITED_KEY = {
  credits: { remaining: 1_000_000_000 },
  ratelimits: [{ name: 'requests', limit: 1_000_000_000, duration: 60_000, autoApply: true }],
};

/**
 * A new data dir with one API (made by a keyward started on it, then stopped) and `count`
 * keys of LIMITED_KEY's shape, the store closed again; `seedS`: the seconds the keys took.
 */
export async function seededDataDir(prefix: string, apiName: string, count: number): Promise<{ dataDir: string; apiId: string; seedS: number }> {
  const dataDir = benchTempDir(prefix);
  const keyward = await startKeyward({ KEYWARD_DATA_DIR: dataDir });
  const apiId = (await post(`http://127.0.0.1:${keyward.port}`, keyward.rootKey, 'apis.createApi', { name: apiName })).data.apiId as string;
  await keyward.stop();
  process.stderr.write(`seeding ${count.toLocaleString('en-US')} keys…\n`);
  openStore(dataDir);
  const started = performance.now();
  await seedKeys(apiId, count, LIMITED_KEY, (n) => process.stderr.write(`  ${n.toLocaleString('en-US')}\r`));
  const seedS = (performance.now() - started) / 1000;
  native.close();
  return { dataDir, apiId, seedS };
}

/** A bench's call, and what commits a group-commit batch it left open. */
export type Runner = { call: (i: number) => void; flush: () => void };

/** How a batch of hot calls is opened and committed: by the bench (native batchBegin / batchCommit), or by the server's group commit (the first hot call opens it, the durability gate commits it). */
export interface BatchSteps {
  begin(): void;
  commit(): void;
}

const NATIVE_BATCH: BatchSteps = { begin: () => native.batchBegin(), commit: () => void native.batchCommit() };

/** Wraps a call so every `size` calls share one commit, as the server commits the hot calls of one event-loop turn; `flush` commits a batch left open (a no-op when none is). */
export function batched(size: number, call: (i: number) => void, steps: BatchSteps = NATIVE_BATCH): Runner {
  let inBatch = 0;
  return {
    call: (i) => {
      if (inBatch === 0) steps.begin();
      call(i);
      if (++inBatch === size) {
        steps.commit();
        inBatch = 0;
      }
    },
    flush: () => {
      steps.commit();
      inBatch = 0;
    },
  };
}

/**
 * Gives each identifier `identifier(0)` … `identifier(count − 1)` of the namespace a live
 * window (one `limit` call each, cost 1, through the real engine, 1,000 per commit), so a
 * bench over that many identifiers measures the steady state of that many live windows,
 * not a table that grows during the run.
 */
export function prefillWindows(workspaceId: string, namespace: string, count: number, identifier: (i: number) => string, limit: number, durationMs: number, onProgress?: (done: number) => void): void {
  const nowMs = Date.now();
  const hot = new HotCalls();
  const fill = batched(1000, (i) => {
    const body = Buffer.from(JSON.stringify({ namespace, identifier: identifier(i), limit, duration: durationMs }));
    const out = hot.limit(body, workspaceId, '*', nowMs, true);
    if (isNeed(out) || !out.body.includes('"success":true')) throw new Error(`prefill: limit refused ${identifier(i)}: ${JSON.stringify(out)}`);
  });
  for (let i = 0; i < count; i++) {
    fill.call(i);
    if (onProgress !== undefined && (i + 1) % 100_000 === 0) onProgress(i + 1);
  }
  fill.flush();
}
