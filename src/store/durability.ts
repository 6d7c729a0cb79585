// Durability of acknowledged writes (DESIGN.md §1):
//  - `process`: a write is committed to LMDB (the OS page cache) before its reply; a
//    background thread in the native module fsyncs every KEYWARD_SYNC_INTERVAL_MS.
//  - `disk`: a reply that follows a write waits for an fsync covering it. Group commit: all
//    replies queued before one fsync are released by it.
import { native } from '../engine/native.js';
import type { Durability } from '../config.js';

let mode: Durability = 'process';
let commits = 0;
let queue: (() => void)[] = [];
let scheduled = false;

export function setDurability(d: Durability): void {
  mode = d;
}

/** Count of write transactions committed by this thread; compare before/after a handler. */
export function commitCount(): number {
  return commits;
}

export function noteCommit(): void {
  commits++;
}

function flush(): void {
  scheduled = false;
  const waiting = queue;
  queue = [];
  try {
    native.sync();
  } finally {
    for (const send of waiting) send();
  }
}

/** Runs `send` once the writes committed so far are as durable as the mode promises. */
export function whenDurable(wrote: boolean, send: () => void): void {
  if (!wrote || mode === 'process') {
    send();
    return;
  }
  queue.push(send);
  if (!scheduled) {
    scheduled = true;
    setImmediate(flush);
  }
}
