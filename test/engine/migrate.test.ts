// Store layout upgrades at open (native/src/migrate.rs): a store written by an older keyward
// is rewritten to the current layout the first time it is opened, and everything in it keeps
// working. The older layouts are rebuilt here by hand from records the current code writes.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Principal } from '../../src/auth/permissions.js';
import { native } from '../../src/engine/native.js';
import { createApi } from '../../src/procedures/apis/createApi.js';
import type { Ctx } from '../../src/procedures/context.js';
import { createKey } from '../../src/procedures/keys/createKey.js';
import { getKey } from '../../src/procedures/keys/getKey.js';
import { whoami } from '../../src/procedures/keys/whoami.js';
import { keyHashBytes } from '../../src/store/keys.js';

interface Raw {
  creditsGet(keyId: string, nowMs: number): [number, number, number, number] | undefined;
  verifyKey(workspaceId: string, allowedApis: string, key: string, cost: number, query: string | null, named: string, nowMs: number): string;
}
const raw = native as unknown as Raw;

const WS = 'ws_migrate_test';
const T0 = Date.UTC(2026, 0, 15, 12);
const ctx: Ctx = { principal: new Principal(WS, 'rk_test', ['*']), nowMs: T0, requestId: 'req_test', vaultKey: undefined };

let dir: string | undefined;
afterEach(() => {
  native.close();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

function reopen(): void {
  native.close();
  native.open(dir as string, false, 0, 0);
}

describe('opening a store of an older layout', () => {
  it('moves credits from the credits table (key = keyId) beside the key windows; a record already at the new place wins', () => {
    dir = mkdtempSync(join(tmpdir(), 'keyward-migrate-'));
    native.open(dir, false, 0, 0);
    const credits = native as unknown as { creditsSet(id: string, r: number, a: number, d: number, t: number): void };
    native.transaction(() => {
      credits.creditsSet('key_old', 42, 50, 0, T0);
      credits.creditsSet('key_both', 5, -1, 0, T0);
    });
    const bytes = native.get('ratelimit_windows', 'k/key_old') as Buffer;
    native.transaction(() => {
      native.put('credits', 'key_old', bytes);
      native.del('ratelimit_windows', 'k/key_old');
      native.put('credits', 'key_both', bytes);
    });
    reopen();
    expect(native.range('credits', '', null, 10)).toEqual([]);
    expect(raw.creditsGet('key_old', T0)).toEqual([42, 50, 0, T0]);
    expect(raw.creditsGet('key_both', T0)?.[0]).toBe(5);
  });

  it('moves key records from keys (keyId → record) + key_hashes (hash → keyId) to key_records (hash → record) + keys (keyId → hash)', () => {
    dir = mkdtempSync(join(tmpdir(), 'keyward-migrate-'));
    native.open(dir, false, 0, 0);
    const { apiId } = createApi({ name: 'migrate' }, ctx);
    const made = [0, 1, 2].map((i) => createKey({ apiId, byteLength: 16, enabled: true, recoverable: false, name: `k${i}`, credits: { remaining: 10 } }, ctx));
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
    expect(JSON.parse(raw.verifyKey(WS, '*', made[0]!.key, -1, null, '', T0).slice(1))).toEqual({ valid: false, code: 'NOT_FOUND' });

    reopen();
    expect(native.range('key_hashes', '', null, 10)).toEqual([]);
    for (const [i, { key, keyId }] of made.entries()) {
      expect(native.get('keys', keyId)).toEqual(keyHashBytes(key));
      expect(JSON.parse(raw.verifyKey(WS, '*', key, -1, null, '', T0).slice(1))).toMatchObject({ valid: true, code: 'VALID', keyId, name: `k${i}`, credits: 9 });
      expect(getKey({ keyId, decrypt: false }, ctx)).toMatchObject({ keyId, name: `k${i}` });
      expect(whoami({ key }, ctx)).toMatchObject({ keyId });
    }
    // A second open finds nothing to move.
    reopen();
    expect(JSON.parse(raw.verifyKey(WS, '*', made[1]!.key, -1, null, '', T0).slice(1))).toMatchObject({ code: 'VALID', credits: 8 });
  });
});
