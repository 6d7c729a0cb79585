// The counter log shared by processes (native/src/counterlog/): each process's index of the
// counters must take in what another process appended and removed, whatever that process
// deleted in between (DESIGN.md §1: several processes may share the store).
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { native } from '../../src/engine/native.js';
import { direct } from '../../src/store/db.js';
import { ensureNamespace } from '../../src/store/ratelimits.js';
import { contextBytes, limitCall } from '../helpers/engine.js';
import { tempStore } from '../helpers/tempStore.js';

const NATIVE_PATH = fileURLToPath(new URL('../../native/keyward.node', import.meta.url));
/** 2026-01-15 12:00:00.000 UTC, aligned to a minute. */
const T0 = Date.UTC(2026, 0, 15, 12);
const MIN = 60_000;
const WS = 'ws_clog_test';

const store = tempStore('keyward-clog-', 0, 0);

/** Runs `code` in another process that opens the same store (`native` in scope). */
function inOtherProcess(code: string): string {
  const child = spawnSync(process.execPath, ['-e', `
    const native = require(${JSON.stringify(NATIVE_PATH)});
    native.open(${JSON.stringify(store.dir())}, false, 0, 0);
    const out = (() => { ${code} })();
    native.close();
    process.stdout.write(JSON.stringify(out ?? null));
  `], { encoding: 'utf8' });
  expect(child.stderr).toBe('');
  expect(child.status).toBe(0);
  return child.stdout;
}

function remaining(ns: string, id: string, cost: number, now: number): number {
  return limitCall(WS, { namespace: ns, identifier: id, limit: 10, duration: MIN, cost }, now).data.remaining as number;
}

/** Code for inOtherProcess: `remaining` there (the addon's limit entry called as src/engine/hotCalls.ts calls it). */
function remainingThere(ns: string, id: string, cost: number, now: number): string {
  const request = JSON.stringify({ namespace: ns, identifier: id, limit: 10, duration: MIN, cost });
  return `return JSON.parse(native.limit(Buffer.from(${JSON.stringify(request)}), Buffer.from('${contextBytes(WS, now).toString('base64')}', 'base64'))).data.remaining;`;
}

describe('the counter log across processes', () => {
  it('after this process deleted the newest record, what another process appends next is seen here (no sequence number is given out twice)', () => {
    const ns = direct.transact(() => ensureNamespace(WS, 'clog_seq', T0)).id;
    expect(remaining(ns, 'j', 1, T0)).toBe(9);
    native.transaction(() => native.creditsSet('key_newest', 5, -1, 0, 0));
    // The newest record of the log goes: its last key is now below the numbers given out.
    native.transaction(() => expect(native.creditsDelete('key_newest')).toBe(true));
    const there = inOtherProcess(remainingThere(ns, 'j', 1, T0 + 1));
    expect(there).toBe('8');
    expect(remaining(ns, 'j', 0, T0 + 2)).toBe(8);
    expect(remaining(ns, 'j', 1, T0 + 2)).toBe(7);
    expect(inOtherProcess(remainingThere(ns, 'j', 0, T0 + 3))).toBe('7');
    // Credits spent on both sides add up (a balance read from a stale record would lose one).
    native.transaction(() => native.creditsSet('key_both', 100, -1, 0, 0));
    native.transaction(() => native.creditsSet('key_short', 1, -1, 0, 0));
    native.transaction(() => native.creditsDelete('key_short'));
    inOtherProcess(`native.transaction(() => native.creditsSet('key_both', native.creditsGet('key_both', ${T0})[0] - 1, -1, 0, 0));`);
    native.transaction(() => native.creditsSet('key_both', (native.creditsGet('key_both', T0)?.[0] ?? NaN) - 1, -1, 0, 0));
    expect(native.creditsGet('key_both', T0)?.[0]).toBe(98);
    expect(inOtherProcess(`return native.creditsGet('key_both', ${T0})[0];`)).toBe('98');
  });

  it('a counter another process removed is gone here too, read alone or inside a transaction', () => {
    native.transaction(() => native.creditsSet('key_removed', 100, -1, 0, 0));
    native.transaction(() => native.creditsSet('key_kept', 7, -1, 0, 0));
    expect(native.creditsGet('key_removed', T0)?.[0]).toBe(100);
    inOtherProcess(`native.transaction(() => native.creditsDelete('key_removed'));`);
    expect(native.creditsGet('key_removed', T0)).toBeUndefined();
    native.transaction(() => expect(native.creditsGet('key_removed', T0)).toBeUndefined());
    expect(native.creditsGet('key_kept', T0)?.[0]).toBe(7);
    // Set again there, it is seen here again; removed and set again in one go, too.
    inOtherProcess(`native.transaction(() => native.creditsSet('key_removed', 3, -1, 0, 0));`);
    expect(native.creditsGet('key_removed', T0)?.[0]).toBe(3);
    inOtherProcess(`native.transaction(() => native.creditsDelete('key_kept')); native.transaction(() => native.creditsSet('key_kept', 9, -1, 0, 0));`);
    expect(native.creditsGet('key_kept', T0)?.[0]).toBe(9);
  });

  it('more removals there than the journal keeps: this process reads the whole log again', () => {
    native.transaction(() => native.creditsSet('key_far_gone', 5, -1, 0, 0));
    native.transaction(() => native.creditsSet('key_far_kept', 6, -1, 0, 0));
    expect(native.creditsGet('key_far_gone', T0)?.[0]).toBe(5);
    inOtherProcess(`
      native.transaction(() => native.creditsDelete('key_far_gone'));
      for (let i = 0; i < 4_100; i++) native.transaction(() => { native.creditsSet('key_churn_' + i, 1, -1, 0, 0); native.creditsDelete('key_churn_' + i); });
    `);
    expect(native.creditsGet('key_far_gone', T0)).toBeUndefined();
    expect(native.creditsGet('key_far_kept', T0)?.[0]).toBe(6);
    expect(native.creditsGet('key_churn_4099', T0)).toBeUndefined();
    // The journal keeps its last 4,096 removals, no more.
    const journal = native.range('meta', 'counter_log_removed/', 'counter_log_removed0', 10_000);
    expect(journal.length / 2).toBe(4_096);
  });
});
