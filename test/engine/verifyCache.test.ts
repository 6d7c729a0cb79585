// The verification cache (native/src/verified.rs): key records, and answers that depend on
// records alone, are reused while the store's records epoch is unchanged. Contract: a reused
// record or answer gives exactly the answer a fresh evaluation would give — every record
// change (in this thread, another thread or another process) shows in the very next
// verification, counters (credits, windows) are never taken from the cache, and what an
// answer does not carry in its records (the caller's workspace and API grants, the clock
// against the key's expiry) is checked on every reuse.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { verifyCall, type Data } from '../helpers/engine.js';
import { inBatch, tempStore } from '../helpers/tempStore.js';
import { Principal } from '../../src/auth/permissions.js';
import { native } from '../../src/engine/native.js';
import { createApi } from '../../src/procedures/apis/createApi.js';
import { updateIdentity } from '../../src/procedures/identities/updateIdentity.js';
import { addRoles } from '../../src/procedures/keys/addRoles.js';
import { createKey, type CreateKeyInput } from '../../src/procedures/keys/createKey.js';
import { deleteKey } from '../../src/procedures/keys/deleteKey.js';
import { updateCredits } from '../../src/procedures/keys/updateCredits.js';
import { updateKey } from '../../src/procedures/keys/updateKey.js';
import { createRole } from '../../src/procedures/permissions/createRole.js';
import { setRolePermissions } from '../../src/procedures/permissions/setRolePermissions.js';
import type { Ctx } from '../../src/request/context.js';
import { directCtx } from '../../src/request/direct.js';
import { markApiDeleted } from '../../src/store/apis.js';
import { direct } from '../../src/store/db.js';
import { keyHashBytes } from '../../src/store/keys.js';

const ADDON = fileURLToPath(new URL('../../native/keyward.node', import.meta.url));

const WS = 'ws_cache_test';
const T0 = Date.UTC(2026, 0, 15, 12);
const MIN = 60_000;

const store = tempStore('keyward-verify-cache-', 100);
beforeEach(() => native.setVerifyCache(1024));
afterAll(() => native.setVerifyCache(131_072));

function ctx(nowMs = T0, ws = WS): Ctx {
  return directCtx(new Principal(ws, 'rk_test', ['*']), nowMs);
}

async function newKeyOf(opts: Partial<CreateKeyInput> = {}): Promise<{ keyId: string; key: string; apiId: string }> {
  const apiId = opts.apiId ?? (await createApi({ name: 'cache-test' }, ctx())).apiId;
  return { ...(await createKey({ byteLength: 16, enabled: true, recoverable: false, ...opts, apiId }, ctx())), apiId };
}

const newKey = newKeyOf;

function verify(key: string, o: { now?: number; ws?: string; apis?: string; cost?: number; query?: string } = {}): Data {
  const body: Data = { key };
  if (o.cost !== undefined) body.credits = { cost: o.cost };
  if (o.query !== undefined) body.permissions = o.query;
  return verifyCall(o.ws ?? WS, body, o.now ?? T0, { scope: o.apis ?? '*' }).data;
}

/** Answer hits and misses counted while `fn` runs. */
function counted(fn: () => void): { hits: number; misses: number } {
  const c = countedAll(fn);
  return { hits: c.hits, misses: c.misses };
}

/** Answer and record hits and misses counted while `fn` runs. */
function countedAll(fn: () => void): { hits: number; misses: number; recordHits: number; recordMisses: number } {
  const before = native.stats();
  fn();
  const after = native.stats();
  return {
    hits: after.verifyCacheHits - before.verifyCacheHits,
    misses: after.verifyCacheMisses - before.verifyCacheMisses,
    recordHits: after.verifyCacheRecordHits - before.verifyCacheRecordHits,
    recordMisses: after.verifyCacheRecordMisses - before.verifyCacheRecordMisses,
  };
}

describe('reuse', () => {
  it('a plain key verified twice is answered from the cache the second time, with the same answer', async () => {
    const { key, keyId } = await newKey({ name: 'plain', meta: { plan: 'pro' } });
    let first: Data = {};
    expect(counted(() => (first = verify(key)))).toEqual({ hits: 0, misses: 1 });
    let second: Data = {};
    expect(counted(() => (second = verify(key)))).toEqual({ hits: 1, misses: 0 });
    expect(second).toEqual(first);
    expect(second).toEqual({ valid: true, code: 'VALID', keyId, name: 'plain', meta: { plan: 'pro' }, enabled: true });
  });

  it('a key with credits and a limit reads its record from the cache, its counters never', async () => {
    const { key } = await newKey({ credits: { remaining: 3 }, ratelimits: [{ name: 'rl', limit: 2, duration: MIN, autoApply: true }] });
    const results: Data[] = [];
    const c = countedAll(() => [1, 2, 3].forEach(() => results.push(verify(key))));
    expect(c).toEqual({ hits: 0, misses: 0, recordHits: 2, recordMisses: 1 });
    expect(results.map((r) => [r.code, r.credits, r.ratelimits[0].remaining])).toEqual([
      ['VALID', 2, 1],
      ['VALID', 1, 0],
      ['RATE_LIMITED', 1, 0],
    ]);
  });

  it("a change to another key's record costs a kept record one read of the key table, not its place", async () => {
    const { key } = await newKey({ credits: { remaining: 10 } });
    verify(key);
    expect(countedAll(() => verify(key))).toMatchObject({ recordHits: 1, recordMisses: 0 });
    await newKey(); // bumps the records epoch
    // The record is read again, found unchanged and renewed, then found in the cache again.
    expect(countedAll(() => verify(key))).toMatchObject({ recordHits: 0, recordMisses: 1 });
    expect(countedAll(() => expect(verify(key).credits).toBe(6))).toMatchObject({ recordHits: 1, recordMisses: 0 });
  });

  it('a key whose record and answer exceed what an entry may hold (2 KiB) is verified from the key table every time', async () => {
    const permissions = Array.from({ length: 60 }, (_, i) => `permission.number_${i}.with_a_long_name`);
    const { key } = await newKey({ permissions });
    const c = countedAll(() => [1, 2, 3].forEach(() => expect(verify(key).permissions).toEqual(permissions)));
    expect(c).toEqual({ hits: 0, misses: 3, recordHits: 0, recordMisses: 3 });
  });

  it('a refused verification, a permission query and an unknown key', async () => {
    const { key, keyId } = await newKey({ permissions: ['p.read'] });
    await updateKey({ keyId, enabled: false }, ctx());
    expect(countedAll(() => [1, 2].forEach(() => expect(verify(key).code).toBe('DISABLED')))).toMatchObject({ recordHits: 1, recordMisses: 1 });
    await updateKey({ keyId, enabled: true }, ctx());
    const query = (q: string) => verify(key, { query: q });
    const c = countedAll(() => expect([query('p.read').code, query('p.write').code, query('p.read').code]).toEqual(['VALID', 'INSUFFICIENT_PERMISSIONS', 'VALID']));
    expect(c).toEqual({ hits: 0, misses: 0, recordHits: 2, recordMisses: 1 });
    expect(countedAll(() => [1, 2].forEach(() => expect(verify('no_such_key_1234567890').code).toBe('NOT_FOUND')))).toMatchObject({ recordHits: 0, recordMisses: 2 });
  });

  it('answers of keys with credits or applied limits, to permission queries and named limits are never kept', async () => {
    const credited = await newKey({ credits: { remaining: 3 } });
    const limited = await newKey({ ratelimits: [{ name: 'rl', limit: 10, duration: MIN, autoApply: true }] });
    const c = counted(() => {
      expect([1, 2, 3].map(() => verify(credited.key).credits)).toEqual([2, 1, 0]);
      expect([1, 2].map(() => verify(limited.key).ratelimits[0].remaining)).toEqual([9, 8]);
    });
    expect(c).toEqual({ hits: 0, misses: 0 });
    const plain = await newKey();
    verify(plain.key);
    const q = counted(() => {
      expect(verify(plain.key, { query: 'a.b' })).toMatchObject({ code: 'INSUFFICIENT_PERMISSIONS' });
    });
    expect(q).toEqual({ hits: 0, misses: 0 });
  });

  it('refusals are not kept as answers', async () => {
    const { key, keyId } = await newKey();
    await updateKey({ keyId, enabled: false }, ctx());
    expect(counted(() => [1, 2].forEach(() => expect(verify(key).code).toBe('DISABLED')))).toEqual({ hits: 0, misses: 0 });
    expect(counted(() => expect(verify('no_such_key_1234567890').code).toBe('NOT_FOUND'))).toEqual({ hits: 0, misses: 0 });
    await updateKey({ keyId, enabled: true }, ctx());
    expect(counted(() => [1, 2].forEach(() => expect(verify(key).code).toBe('VALID')))).toEqual({ hits: 1, misses: 1 });
  });

  it('setVerifyCache(0) turns it off; bad sizes are refused', async () => {
    native.setVerifyCache(0);
    const { key } = await newKey();
    expect(counted(() => [1, 2, 3].forEach(() => expect(verify(key).code).toBe('VALID'))).hits).toBe(0);
    for (const bad of [-1, 1.5, 2 ** 25, Number.NaN]) expect(() => native.setVerifyCache(bad), String(bad)).toThrow(/slots/);
    expect(() => (native.setVerifyCache as (v: unknown) => void)('10')).toThrow();
  });

  it('a full cache replaces entries and keeps answering exactly', async () => {
    native.setVerifyCache(4);
    const keys: { keyId: string; key: string; apiId: string }[] = [];
    for (let i = 0; i < 12; i++) keys.push(await newKey());
    for (let round = 0; round < 3; round++) {
      for (const k of keys) expect(verify(k.key)).toEqual({ valid: true, code: 'VALID', keyId: k.keyId, enabled: true });
    }
  });
});

describe('what is checked on every reuse', () => {
  it("the caller's workspace and API grants", async () => {
    const { key, apiId } = await newKey();
    verify(key);
    expect(verify(key).code).toBe('VALID');
    expect(verify(key, { ws: 'ws_someone_else' })).toEqual({ valid: false, code: 'NOT_FOUND' });
    expect(verify(key, { apis: 'api_other\napi_more' })).toEqual({ valid: false, code: 'NOT_FOUND' });
    expect(verify(key, { apis: `api_other\n${apiId}` }).code).toBe('VALID');
  });

  it("the clock against the key's expiry", async () => {
    const { key } = await newKey({ expires: T0 + MIN });
    expect(verify(key).code).toBe('VALID');
    expect(verify(key, { now: T0 + MIN }).code).toBe('VALID');
    expect(verify(key, { now: T0 + MIN + 1 }).code).toBe('EXPIRED');
    expect(verify(key, { now: T0 + 1 }).code).toBe('VALID');
  });
});

// Each case runs for a plain key (whose answer is kept) and for a key with credits (whose
// record is kept and whose counters are read every time).
describe.each([
  { kind: 'plain key', shape: {} },
  { kind: 'key with credits', shape: { credits: { remaining: 1000 } } },
])('every record change shows in the next verification: $kind', ({ kind, shape }) => {
  const unique = (name: string) => `${name}_${kind.replaceAll(' ', '_')}`;
  const newKey = (opts: Partial<CreateKeyInput> = {}) => newKeyOf({ ...shape, ...opts });

  it('enabled, meta, name, expiry', async () => {
    const { key, keyId } = await newKey({ meta: { v: 1 } });
    verify(key);
    await updateKey({ keyId, enabled: false }, ctx());
    expect(verify(key).code).toBe('DISABLED');
    await updateKey({ keyId, enabled: true, meta: { v: 2 }, name: 'renamed' }, ctx());
    verify(key);
    expect(verify(key)).toMatchObject({ code: 'VALID', meta: { v: 2 }, name: 'renamed' });
    await updateKey({ keyId, expires: T0 - 1 }, ctx());
    expect(verify(key).code).toBe('EXPIRED');
  });

  it('credits and limits given to the key apply at once', async () => {
    const { key, keyId } = await newKey();
    verify(key);
    verify(key);
    await updateCredits({ keyId, operation: 'set', value: 2 }, ctx());
    expect([verify(key).credits, verify(key).credits, verify(key).code]).toEqual([1, 0, 'USAGE_EXCEEDED']);
    await updateCredits({ keyId, operation: 'set', value: null }, ctx());
    expect(verify(key).credits).toBeUndefined();
    verify(key);
    await updateKey({ keyId, ratelimits: [{ name: 'tight', limit: 1, duration: MIN, autoApply: true }] }, ctx());
    expect(verify(key).code).toBe('VALID');
    expect(verify(key).code).toBe('RATE_LIMITED');
  });

  it('roles, role permissions and the identity', async () => {
    const [user, roleName] = [unique('cache_user'), unique('cache_role')];
    const { key, keyId } = await newKey({ externalId: user });
    const role = await createRole({ name: roleName, permissions: ['p.one'] }, ctx());
    verify(key);
    await addRoles({ keyId, roles: [roleName] }, ctx());
    verify(key);
    expect(verify(key)).toMatchObject({ roles: [roleName], permissions: ['p.one'] });
    await setRolePermissions({ roleId: role.roleId, permissions: ['p.two'] }, ctx());
    expect(verify(key).permissions).toEqual(['p.two']);
    await updateIdentity({ identity: user, meta: { tier: 'gold' } }, ctx());
    expect(verify(key).identity).toMatchObject({ externalId: user, meta: { tier: 'gold' } });
  });

  it('a deleted key and a deleted API', async () => {
    const a = await newKey();
    verify(a.key);
    await deleteKey({ keyId: a.keyId, permanent: false }, ctx());
    expect(verify(a.key)).toEqual({ valid: false, code: 'NOT_FOUND' });
    const b = await newKey();
    verify(b.key);
    expect(direct.transact(() => markApiDeleted(WS, b.apiId, T0))).toBe(true);
    expect(verify(b.key)).toEqual({ valid: false, code: 'NOT_FOUND' });
  });

  it('a change made by another process', async () => {
    const { key } = await newKey();
    verify(key);
    const again = countedAll(() => verify(key));
    expect(again.hits + again.recordHits).toBe(1);
    // The other process removes the key's record straight from the store.
    const script = `const n = require(${JSON.stringify(ADDON)}); n.open(${JSON.stringify(store.dir())}, false, 0, 0);
      n.transaction(() => { if (!n.del('key_records', Buffer.from(${JSON.stringify(keyHashBytes(key).toString('base64'))}, 'base64'))) throw new Error('no record'); });
      n.close();`;
    const child = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
    expect(child.stderr).toBe('');
    expect(child.status).toBe(0);
    expect(verify(key)).toEqual({ valid: false, code: 'NOT_FOUND' });
  });

  // A turn's batch of hot calls reads the records epoch and the API once per snapshot or
  // epoch: a change committed before the batch began shows in it.
  it('inside batches: an API deleted by another process, then a key disabled by this one', async () => {
    const { key, apiId } = await newKey();
    expect(inBatch(() => [verify(key).code, verify(key).code])).toEqual(['VALID', 'VALID']);
    const script = `const n = require(${JSON.stringify(ADDON)}); n.open(${JSON.stringify(store.dir())}, false, 0, 0);
      n.transaction(() => { if (!n.del('apis', ${JSON.stringify(apiId)})) throw new Error('no api'); });
      n.close();`;
    const child = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
    expect(child.stderr).toBe('');
    expect(child.status).toBe(0);
    expect(inBatch(() => verify(key))).toEqual({ valid: false, code: 'NOT_FOUND' });
    const other = await newKey();
    expect(inBatch(() => verify(other.key).code)).toBe('VALID');
    await updateKey({ keyId: other.keyId, enabled: false }, ctx());
    expect(inBatch(() => verify(other.key).code)).toBe('DISABLED');
  });

  it('an answer computed inside a transaction that changed records and then aborted is not kept', async () => {
    const { key, keyId } = await newKey();
    // The aborted transaction takes the epoch one step further, then gives it back...
    expect(() =>
      native.transaction(() => {
        native.put('roles', 'role_never_committed', Buffer.from('x'));
        // Cost 0: a verification that spends inside a transaction of the caller's is refused.
        expect(verify(key, { cost: 0 }).code).toBe('VALID');
        throw new Error('abort');
      }),
    ).toThrow('abort');
    // ...and the next committed change reaches the same epoch with other records.
    await updateKey({ keyId, enabled: false }, ctx());
    expect(verify(key).code).toBe('DISABLED');
  });

  it('a store closed and another one opened does not answer from the first', async () => {
    const { key } = await newKey();
    verify(key);
    native.close();
    const other = mkdtempSync(join(tmpdir(), 'keyward-verify-cache-other-'));
    try {
      native.open(other, false, 100, 16 * 1024 * 1024);
      expect(verify(key)).toEqual({ valid: false, code: 'NOT_FOUND' });
      native.close();
    } finally {
      rmSync(other, { recursive: true, force: true });
      native.open(store.dir(), false, 100, 16 * 1024 * 1024);
    }
    expect(verify(key).code).toBe('VALID');
  });
});
