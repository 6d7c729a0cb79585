// Piscina task: removes every key of a deleted API, in batches of short write transactions
// so the serving thread's writes interleave. The API was already marked deleted, so its keys
// verify as NOT_FOUND throughout; the API record itself goes last. The same task, given an
// `unlinking`, unlinks the keys of a deleted role or identity (store/cascades.ts) the same way.
import { performance } from 'node:perf_hooks';
import { native } from '../engine/native.js';
import { apiKeyIds } from '../store/apis.js';
import { delRecord, direct, getRecord } from '../store/db.js';
import { getKeyRecord, removeKey } from '../store/keys.js';
import { unlinkBatch, type Unlinking } from '../store/cascades.js';
import type { ApiRecord } from '../store/records.js';

// Small batches: each holds the writer lock, so the serving threads wait at most one of them.
export const BATCH = 100;

export interface PurgeTask {
  dataDir: string;
  initialMapBytes: number;
  writeMap: boolean;
  /** The deleted API whose keys go, or (with `unlinking`) none. */
  apiId?: string;
  unlinking?: Unlinking;
}

/** Deletes up to BATCH keys of the API (inside the caller's transaction, one per batch); returns how many it deleted. */
export function purgeBatch(apiId: string): number {
  const ids = apiKeyIds(apiId, undefined, BATCH);
  for (const id of ids) {
    const key = getKeyRecord(id);
    if (key !== undefined) removeKey(key);
    else delRecord('api_keys', `${apiId}/${id}`);
  }
  if (ids.length === 0 && getRecord<ApiRecord>('apis', apiId)?.deletedAtMs !== undefined) delRecord('apis', apiId);
  return ids.length;
}

// Between batches the worker rests for REST_FACTOR times as long as the batch took. LMDB's
// writer lock is a plain mutex, not handed out in turn: a worker that began its next batch
// at once got it back again and again ahead of the serving thread, whose verifications and
// limit calls that write (credits, windows) need it too. Without the rest, deleting an API
// of 40,000 keys took 0.56 s during which verifications waited up to 23 ms (p99 of an 8 s
// run 22.8 ms, 1.7 ms without the deletion).
const REST_FACTOR = 2;

/** Runs `batch` until it does nothing, resting between batches; returns the total it did. */
function paced(batch: () => number): number {
  const rest = new Int32Array(new SharedArrayBuffer(4));
  let total = 0;
  for (;;) {
    const started = performance.now();
    const n = batch();
    if (n === 0) return total;
    total += n;
    Atomics.wait(rest, 0, 0, Math.max(1, REST_FACTOR * (performance.now() - started)));
  }
}

/** The worker entry: the store is process-wide, so opening the same dir is a no-op. */
export default function run(task: PurgeTask): number {
  native.open(task.dataDir, false, 0, task.initialMapBytes, task.writeMap);
  const { unlinking, apiId } = task;
  if (unlinking !== undefined) return paced(() => direct.transact(() => unlinkBatch(unlinking, Date.now())));
  return apiId === undefined ? 0 : paced(() => direct.transact(() => purgeBatch(apiId)));
}
