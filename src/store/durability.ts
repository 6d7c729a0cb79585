// When a reply may leave (DESIGN.md §1): nothing is acknowledged before it is committed.
//
// Group commit of the hot procedures (on in the server, see enableGroupCommit): the first
// verifyKey / limit of an event-loop turn that changes state opens one LMDB write
// transaction on this thread (the native call reports it with the flag '2'); the hot calls
// of that turn read and write through it; it is committed at the end of the turn
// (setImmediate, or earlier when a management transaction needs the writer). Read-only hot
// calls never take the writer lock. Every reply produced while a batch is open waits for
// that commit; if the commit fails, those replies become 503 and nothing of the batch was
// applied.
//
// Modes:
//  - `process`: a reply leaves once its writes are committed (in the OS page cache, which a
//    kill -9 does not lose); the native syncer fsyncs every KEYWARD_SYNC_INTERVAL_MS.
//  - `disk`: a reply that follows a write waits for an fsync covering it; one fsync per turn
//    serves every reply queued before it.
import { native } from '../engine/native.js';
import type { Durability } from '../config.js';

interface BatchNative {
  setGroupCommit(on: boolean): void;
  batchCommit(): boolean;
}
const batchNative = native as unknown as BatchNative;

/** A reply that may have to wait: `send` once it may leave, `fail` if what it waited for failed. */
export interface Outgoing {
  send(): void;
  fail(err: unknown): void;
}

let mode: Durability = 'process';
let commits = 0;
let batchOpen = false;
let batchSeq = 0;
const failedBatches = new Map<number, unknown>();
// The waiting replies, with (in parallel) the batch open when each was produced (0: none)
// and whether it wrote.
let queue: Outgoing[] = [];
let queueBatches: number[] = [];
let queueWrote: boolean[] = [];
let flushScheduled = false;

export function setDurability(d: Durability): void {
  mode = d;
}

/** Count of write transactions committed or joined by this thread; compare before/after a handler. */
export function commitCount(): number {
  return commits;
}

export function noteCommit(): void {
  commits++;
}

function scheduleFlush(): void {
  if (flushScheduled) return;
  flushScheduled = true;
  setImmediate(flush);
}

export function enableGroupCommit(): void {
  batchNative.setGroupCommit(true);
}

/**
 * After a hot native call: `flag` is the first character code of its result — '0' read
 * only, '1' wrote (committed, or into this turn's open batch), '2' wrote into a batch the
 * call opened, which this turn must now commit.
 */
export function noteHotEffect(flag: number): void {
  if (flag === 48 /* '0' */) return;
  commits++;
  if (flag === 50 /* '2' */) {
    batchOpen = true;
    batchSeq++;
    scheduleFlush();
  }
}

/** Commits the open batch, if any (before another transaction, at the end of the turn, on shutdown). */
export function closeBatch(): void {
  if (!batchOpen) return;
  batchOpen = false;
  try {
    batchNative.batchCommit();
  } catch (err) {
    failedBatches.set(batchSeq, err);
  }
}

function flush(): void {
  flushScheduled = false;
  closeBatch();
  const waiting = queue;
  const batches = queueBatches;
  const wrote = queueWrote;
  queue = [];
  queueBatches = [];
  queueWrote = [];
  let syncError: unknown;
  if (mode === 'disk' && wrote.includes(true)) {
    try {
      native.sync();
    } catch (err) {
      syncError = err;
    }
  }
  for (let i = 0; i < waiting.length; i++) {
    const batch = batches[i] as number;
    const err = (batch === 0 ? undefined : failedBatches.get(batch)) ?? (wrote[i] === true ? syncError : undefined);
    if (err === undefined) (waiting[i] as Outgoing).send();
    else (waiting[i] as Outgoing).fail(err);
  }
  // Only when something failed: clear() replaces the table, and this long-lived Map's table
  // lives in V8's old space, so clearing it every turn filled the old space at request rate
  // and brought a mark-compact (several ms on this thread) every few seconds under load.
  if (failedBatches.size > 0) failedBatches.clear();
}

/**
 * Sends `reply` once everything it reports is as durable as the mode promises (at once when
 * nothing is pending), or fails it when the commit (or fsync) it waited for failed.
 */
export function whenDurable(wrote: boolean, reply: Outgoing): void {
  if (!batchOpen && !(mode === 'disk' && wrote)) {
    reply.send();
    return;
  }
  queue.push(reply);
  queueBatches.push(batchOpen ? batchSeq : 0);
  queueWrote.push(wrote);
  scheduleFlush();
}
