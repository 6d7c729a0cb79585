// Store layout upgrades at open (native/src/migrate.rs): a store written by an older keyward
// is rewritten to the current layout the first time it is opened, and everything in it keeps
// working. The older layouts are rebuilt here by hand from records the current code writes.
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Principal } from '../../src/auth/permissions.js';
import { native } from '../../src/engine/native.js';
import { createApi } from '../../src/procedures/apis/createApi.js';
import { createKey } from '../../src/procedures/keys/createKey.js';
import { getKey } from '../../src/procedures/keys/getKey.js';
import { whoami } from '../../src/procedures/keys/whoami.js';
import type { Ctx } from '../../src/request/context.js';
import { directCtx } from '../../src/request/direct.js';
import { direct, getRecord, putRecord } from '../../src/store/db.js';
import { keyHashBytes } from '../../src/store/keys.js';
import { ensureNamespace, findNamespace } from '../../src/store/ratelimits.js';
import { limitCall, verifyCall } from '../helpers/engine.js';

const WS = 'ws_migrate_test';
const T0 = Date.UTC(2026, 0, 15, 12);
const ctx: Ctx = directCtx(new Principal(WS, 'rk_test', ['*']), T0);

/** keys.verifyKey's data for `key` (the default cost) in WS at T0. */
const verified = (key: string) => verifyCall(WS, { key }, T0).data;

let dir: string | undefined;
afterEach(() => {
  native.close();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

/** A 60 s window record (window.rs: duration, seq, current, previous as i64 LE) with `current` admitted in T0's bucket. */
function windowRecord(current: number): Buffer {
  const b = Buffer.alloc(32);
  b.writeBigInt64LE(60_000n, 0);
  b.writeBigInt64LE(BigInt(Math.floor(T0 / 60_000)), 8);
  b.writeBigInt64LE(BigInt(current), 16);
  return b;
}

function reopen(): void {
  native.close();
  native.open(dir as string, false, 0, 0);
}

describe('opening a store of an older layout', () => {
  it('moves credits from the credits table (key = keyId) and from ratelimit_windows (k/<keyId>) to the counter log; a record already there wins', () => {
    dir = mkdtempSync(join(tmpdir(), 'keyward-migrate-'));
    native.open(dir, false, 0, 0);
    native.transaction(() => native.creditsSet('key_both', 5, -1, 0, T0));
    // credits.rs's record: remaining, refill amount, refill day, last refill (i64 LE each).
    const record = (remaining: number): Buffer => {
      const b = Buffer.alloc(32);
      [remaining, 50, 0, T0].forEach((n, i) => b.writeBigInt64LE(BigInt(n), i * 8));
      return b;
    };
    native.transaction(() => {
      native.put('credits', 'key_old', record(42));
      native.put('credits', 'key_both', record(1));
      native.put('ratelimit_windows', 'k/key_newer', record(17));
    });
    reopen();
    expect(native.range('credits', '', null, 10)).toEqual([]);
    expect(native.range('ratelimit_windows', '', null, 10)).toEqual([]);
    expect(native.creditsGet('key_old', T0)).toEqual([42, 50, 0, T0]);
    expect(native.creditsGet('key_newer', T0)).toEqual([17, 50, 0, T0]);
    expect(native.creditsGet('key_both', T0)?.[0]).toBe(5);
  });

  it('moves key records from keys (keyId → record) + key_hashes (hash → keyId) to key_records (hash → record) + keys (keyId → hash)', async () => {
    dir = mkdtempSync(join(tmpdir(), 'keyward-migrate-'));
    native.open(dir, false, 0, 0);
    const { apiId } = await createApi({ name: 'migrate' }, ctx);
    const made: { key: string; keyId: string }[] = [];
    for (const i of [0, 1, 2]) made.push(await createKey({ apiId, byteLength: 16, enabled: true, recoverable: false, name: `k${i}`, credits: { remaining: 10 } }, ctx));
    // Rewrite them as the older layout stored them.
    native.transaction(() => {
      for (const { key, keyId } of made) {
        const hash = keyHashBytes(key);
        const record = native.get('key_records', hash) as Buffer;
        native.del('key_records', hash);
        native.put('keys', keyId, record);
        native.put('key_hashes', hash, Buffer.from(keyId, 'utf8'));
      }
    });
    expect(verified(made[0]!.key)).toEqual({ valid: false, code: 'NOT_FOUND' });

    reopen();
    expect(native.range('key_hashes', '', null, 10)).toEqual([]);
    for (const [i, { key, keyId }] of made.entries()) {
      expect(native.get('keys', keyId)).toEqual(keyHashBytes(key));
      expect(verified(key)).toMatchObject({ valid: true, code: 'VALID', keyId, name: `k${i}`, credits: 9 });
      expect(getKey({ keyId, decrypt: false }, ctx)).toMatchObject({ keyId, name: `k${i}` });
      expect(whoami({ key }, ctx)).toMatchObject({ keyId });
    }
    // A second open finds nothing to move.
    reopen();
    expect(verified(made[1]!.key)).toMatchObject({ code: 'VALID', credits: 8 });
  });

  it('moves limiter windows from n/<namespaceId>/<durationMs>/<sid> to their digest keys, and they keep counting', () => {
    dir = mkdtempSync(join(tmpdir(), 'keyward-migrate-'));
    native.open(dir, false, 0, 0);
    // Windows are counted for a namespace of the workspace: its id, as the older layout keyed them by.
    const ns = direct.transact(() => ensureNamespace(WS, 'migrate', T0)).id;
    const long = 'x'.repeat(500); // stored by its sid '#' + base64(SHA-256)
    native.transaction(() => {
      native.put('ratelimit_windows', `n/${ns}/60000/user_a`, windowRecord(3));
      native.put('ratelimit_windows', `n/${ns}/60000/#${createHash('sha256').update(long).digest('base64')}`, windowRecord(5));
      native.put('ratelimit_windows', `n/${ns}/60000/a/b/c`, windowRecord(1)); // identifiers may contain '/'
    });
    reopen();
    expect(native.range('ratelimit_windows', 'n/', 'n0', 10)).toEqual([]);
    const remaining = (id: string) => limitCall(WS, { namespace: ns, identifier: id, limit: 10, duration: 60_000, cost: 0 }, T0).data.remaining as number;
    expect(remaining('user_a')).toBe(7);
    expect(remaining(long)).toBe(5);
    expect(remaining('a/b/c')).toBe(9);
    expect(remaining('user_b')).toBe(10);
  });

  it('moves limiter windows from their digest keys in ratelimit_windows to the counter log, and they keep counting', () => {
    dir = mkdtempSync(join(tmpdir(), 'keyward-migrate-'));
    native.open(dir, false, 0, 0);
    const ns = direct.transact(() => ensureNamespace(WS, 'migrate_digest', T0)).id;
    // limit.rs window_key: 0x01, then the first 15 bytes of SHA-256(ns ‖ 0 ‖ duration ‖ 0 ‖ sid).
    const place = (sid: string): Buffer =>
      Buffer.concat([Buffer.from([1]), createHash('sha256').update(`${ns}\0${60_000}\0${sid}`).digest().subarray(0, 15)]);
    native.transaction(() => {
      native.put('ratelimit_windows', place('user_a'), windowRecord(4));
      native.put('ratelimit_windows', place('user_b'), windowRecord(10));
    });
    reopen();
    expect(native.range('ratelimit_windows', Buffer.from([1]), Buffer.from([2]), 10)).toEqual([]);
    expect(native.range('counter_log', '', null, 10)).toHaveLength(4);
    const remaining = (id: string) => limitCall(WS, { namespace: ns, identifier: id, limit: 10, duration: 60_000, cost: 0 }, T0).data.remaining as number;
    expect(remaining('user_a')).toBe(6);
    expect(remaining('user_b')).toBe(0);
    expect(remaining('user_c')).toBe(10);
    // Opening it again moves nothing and changes nothing.
    reopen();
    expect(native.range('counter_log', '', null, 10)).toHaveLength(4);
    expect(remaining('user_a')).toBe(6);
  });

  it('re-keys namespaces and overrides whose name or identifier starts with # (now stored by digest), with their index entries, once', () => {
    dir = mkdtempSync(join(tmpdir(), 'keyward-migrate-'));
    native.open(dir, false, 0, 0);
    const digest = (s: string): string => `#${createHash('sha256').update(s).digest('base64')}`;
    const long = 'q'.repeat(450);
    const nsRecord = (id: string, name: string) => ({ id, workspaceId: WS, name, createdAtMs: T0 });
    const ovr = (id: string, namespaceId: string, identifier: string, limit: number) => ({ id, namespaceId, identifier, limit, durationMs: 60_000, createdAtMs: T0 });
    // The layout before: names and identifiers of at most 440 bytes kept as they are.
    const legacy: [string, string, unknown, string][] = [
      ['ratelimit_namespaces', `${WS}/#chan`, nsRecord('rlns_hash', '#chan'), 'ns_id/rlns_hash'],
      ['ratelimit_namespaces', `${WS}/plain`, nsRecord('rlns_plain', 'plain'), 'ns_id/rlns_plain'],
      ['ratelimit_namespaces', `${WS}/${digest(long)}`, nsRecord('rlns_long', long), 'ns_id/rlns_long'],
      ['ratelimit_overrides', 'rlns_hash/e/#vip', ovr('rlor_vip', 'rlns_hash', '#vip', 3), 'ns_ovr/rlns_hash/rlor_vip'],
      ['ratelimit_overrides', 'rlns_hash/w/#team*', ovr('rlor_team', 'rlns_hash', '#team*', 5), 'ns_ovr/rlns_hash/rlor_team'],
      ['ratelimit_overrides', 'rlns_hash/e/u1', ovr('rlor_u1', 'rlns_hash', 'u1', 7), 'ns_ovr/rlns_hash/rlor_u1'],
      ['ratelimit_overrides', `rlns_hash/e/${digest(long)}`, ovr('rlor_long', 'rlns_hash', long, 9), 'ns_ovr/rlns_hash/rlor_long'],
    ];
    native.transaction(() => {
      for (const [table, key, record, index] of legacy) {
        putRecord(table as 'ratelimit_namespaces', key, record);
        native.put('indexes', index, Buffer.from(key, 'utf8'));
      }
      native.put('ratelimit_overrides', 'rlns_hash/e/#junk', Buffer.from([0xc1])); // not msgpack: left as it is
      native.del('meta', 'sids_hashed'); // set when this new store was opened
    });
    reopen();
    const moved: Record<string, string> = {
      [`${WS}/#chan`]: `${WS}/${digest('#chan')}`,
      'rlns_hash/e/#vip': `rlns_hash/e/${digest('#vip')}`,
      'rlns_hash/w/#team*': `rlns_hash/w/${digest('#team*')}`,
    };
    for (const [table, key, record, index] of legacy) {
      const now = moved[key] ?? key;
      expect(getRecord(table as 'ratelimit_namespaces', now), now).toEqual(record);
      expect(native.get('indexes', index)?.toString('utf8'), index).toBe(now);
      if (now !== key) expect(getRecord(table as 'ratelimit_namespaces', key), key).toBeUndefined();
    }
    expect(native.get('ratelimit_overrides', 'rlns_hash/e/#junk')).toEqual(Buffer.from([0xc1]));
    // The engine finds the namespace by its name and the overrides by their identifiers.
    const limited = (id: string) => limitCall(WS, { namespace: 'rlns_hash', identifier: id, limit: 100, duration: 60_000, cost: 0 }, T0).data as { limit: number; overrideId?: string };
    expect(limited('#vip')).toMatchObject({ limit: 3, overrideId: 'rlor_vip' });
    expect(limited('#team-a')).toMatchObject({ limit: 5, overrideId: 'rlor_team' });
    expect(limited('u1')).toMatchObject({ limit: 7, overrideId: 'rlor_u1' });
    expect(limited(long)).toMatchObject({ limit: 9, overrideId: 'rlor_long' });
    expect(findNamespace(WS, '#chan')?.id).toBe('rlns_hash');
    expect(limitCall(WS, { namespace: '#chan', identifier: '#vip', limit: 100, duration: 60_000 }, T0).envelope).toContain('"overrideId":"rlor_vip"');
    // Marked as done: a record written the old way afterwards is left where it is.
    native.transaction(() => putRecord('ratelimit_overrides', 'rlns_hash/e/#late', ovr('rlor_late', 'rlns_hash', '#late', 1)));
    reopen();
    expect(getRecord('ratelimit_overrides', 'rlns_hash/e/#late')).toBeDefined();
  });

  it('the counter log is written only through the engine', () => {
    dir = mkdtempSync(join(tmpdir(), 'keyward-migrate-'));
    native.open(dir, false, 0, 0);
    expect(() => native.transaction(() => native.put('counter_log', 'x', Buffer.alloc(48)))).toThrow(/written only through the engine's counters/);
    expect(() => native.transaction(() => native.del('counter_log', 'x'))).toThrow(/written only through the engine's counters/);
  });
});
