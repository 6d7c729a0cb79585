// keys.createKey 200: the {keyId,key} shape, the key string format, and every Limits-table
// bound at its accepted edge (the stored record is read back with keys.getKey).
import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, createApi, expectOk } from '../../helpers/server.js';
import { BASE58_RE, base58Decode, getKey, newKey, newRole, uniq, verify } from '../../helpers/keys.js';

const srv = inProcessServer();

describe('keys.createKey 200', () => {
  it('returns exactly {keyId, key}; the key verifies VALID', async () => {
    const apiId = await createApi(srv());
    const res = await call(srv(), 'keys.createKey', { apiId });
    const data = expectOk(res);
    expect(Object.keys(data).sort()).toEqual(['key', 'keyId']);
    expect(data.keyId).toMatch(/^key_[1-9A-HJ-NP-Za-km-z]+$/);
    expect(await verify(srv(), data.key)).toMatchObject({ valid: true, code: 'VALID', keyId: data.keyId });
  });

  it('no prefix: the key is bare base58 of 16 bytes, start = its first 4 characters', async () => {
    const { key, keyId } = await newKey(srv());
    expect(key).toMatch(BASE58_RE);
    expect(base58Decode(key)).toHaveLength(16);
    const got = await getKey(srv(), keyId);
    expect(got.start).toBe(key.slice(0, 4));
  });

  it.each([
    ['a 1-char prefix, 16 bytes', 'a', 16],
    ['a 16-char prefix, 255 bytes', 'Abcdefghijklmn_9', 255],
    ['prefix with digits and underscore, 32 bytes', 'sk_live', 32],
  ])('%s: key = prefix_ + base58(byteLength), start = prefix_ + 4 chars', async (_why, prefix, byteLength) => {
    const { key, keyId } = await newKey(srv(), { prefix, byteLength });
    expect(key.startsWith(`${prefix}_`)).toBe(true);
    const body = key.slice(prefix.length + 1);
    expect(body).toMatch(BASE58_RE);
    expect(base58Decode(body)).toHaveLength(byteLength);
    expect((await getKey(srv(), keyId)).start).toBe(`${prefix}_${body.slice(0, 4)}`);
  });

  it('two keys are different strings with different ids', async () => {
    const apiId = await createApi(srv());
    const a = await newKey(srv(), { apiId });
    const b = await newKey(srv(), { apiId });
    expect(a.key).not.toBe(b.key);
    expect(a.keyId).not.toBe(b.keyId);
  });

  it('accepts the SDK defaults sent explicitly (byteLength 16, enabled true, recoverable false)', async () => {
    const { key } = await newKey(srv(), { byteLength: 16, enabled: true, recoverable: false });
    expect(base58Decode(key)).toHaveLength(16);
  });

  it('stores every field: getKey shows name, meta, expires, credits+refill, identity, ratelimits, roles, permissions', async () => {
    const role = await newRole(srv(), ['docs.read', 'shared.perm']);
    const before = Date.now();
    const { keyId } = await newKey(srv(), {
      name: 'full key',
      externalId: 'user.full-1_x',
      meta: { plan: 'pro', nested: { n: 1 } },
      expires: 4102444800000,
      credits: { remaining: 42, refill: { interval: 'monthly', amount: 100, refillDay: 15 } },
      ratelimits: [{ name: 'per-sec', limit: 10, duration: 1000, autoApply: true }, { name: 'manual', limit: 5, duration: 60_000 }],
      roles: [role],
      permissions: ['shared.perm', 'direct.write'],
      enabled: false,
    });
    const got = await getKey(srv(), keyId);
    expect(got).toMatchObject({
      keyId,
      enabled: false,
      name: 'full key',
      meta: { plan: 'pro', nested: { n: 1 } },
      expires: 4102444800000,
      credits: { remaining: 42, refill: { interval: 'monthly', amount: 100, refillDay: 15 } },
      identity: { externalId: 'user.full-1_x' },
      roles: [role],
    });
    expect(got.identity.id).toMatch(/^id_/);
    expect(got.createdAt).toBeGreaterThanOrEqual(before - 1000);
    expect([...got.permissions].sort()).toEqual(['direct.write', 'docs.read', 'shared.perm']);
    expect(got.ratelimits).toEqual([
      { id: expect.stringMatching(/^rl_/), name: 'per-sec', limit: 10, duration: 1000, autoApply: true },
      { id: expect.stringMatching(/^rl_/), name: 'manual', limit: 5, duration: 60_000, autoApply: false },
    ]);
    expect(got).not.toHaveProperty('plaintext');
  });

  it('daily refill without refillDay; credits.remaining null = unlimited (no credits on the record)', async () => {
    const daily = await newKey(srv(), { credits: { remaining: 0, refill: { interval: 'daily', amount: 7 } } });
    expect((await getKey(srv(), daily.keyId)).credits).toEqual({ remaining: 0, refill: { interval: 'daily', amount: 7 } });
    const unlimited = await newKey(srv(), { credits: { remaining: null } });
    expect(await getKey(srv(), unlimited.keyId)).not.toHaveProperty('credits');
  });

  it('accepts the lower edges: apiId of a real API, name 1 char, externalId 1 char, expires 0, empty lists', async () => {
    const { keyId, key } = await newKey(srv(), { name: 'n', externalId: 'e', expires: 0, roles: [], permissions: [], ratelimits: [], meta: {} });
    const got = await getKey(srv(), keyId);
    expect(got).toMatchObject({ name: 'n', expires: 0, identity: { externalId: 'e' } });
    expect(await verify(srv(), key)).toMatchObject({ valid: false, code: 'EXPIRED' });
  });

  it('accepts the upper edges: name 255, externalId 255 (all allowed characters), 50 ratelimits', async () => {
    const name = 'N'.repeat(255);
    const externalId = ('AZaz09_.-' + 'x'.repeat(255)).slice(0, 255);
    const ratelimits = Array.from({ length: 50 }, (_, i) => ({ name: `limit_${i}`, limit: 1 + i, duration: 1000 + i }));
    const { keyId } = await newKey(srv(), { name, externalId, ratelimits });
    const got = await getKey(srv(), keyId);
    expect(got.name).toBe(name);
    expect(got.identity.externalId).toBe(externalId);
    expect(got.ratelimits).toHaveLength(50);
  });

  it('accepts a key limit longer than 30 days (Unkey sets no maximum); verification uses its window', async () => {
    const year = 365 * 24 * 3_600_000;
    const { key, keyId } = await newKey(srv(), { ratelimits: [{ name: 'yearly', limit: 2, duration: year, autoApply: true }] });
    expect((await getKey(srv(), keyId)).ratelimits).toMatchObject([{ name: 'yearly', limit: 2, duration: year, autoApply: true }]);
    const first = await verify(srv(), key);
    expect(first).toMatchObject({ valid: true, ratelimits: [{ name: 'yearly', limit: 2, duration: year, remaining: 1 }] });
    expect(first.ratelimits[0].reset % year).toBe(0);
    await verify(srv(), key);
    expect(await verify(srv(), key)).toMatchObject({ valid: false, code: 'RATE_LIMITED' });
  });

  it('accepts meta of exactly 10 KB serialized (10240 bytes of JSON)', async () => {
    const overhead = JSON.stringify({ p: '' }).length;
    const meta = { p: 'm'.repeat(10 * 1024 - overhead) };
    expect(Buffer.byteLength(JSON.stringify(meta))).toBe(10240);
    const { keyId } = await newKey(srv(), { meta });
    expect((await getKey(srv(), keyId)).meta).toEqual(meta);
  });

  it('accepts meta of exactly 100 properties', async () => {
    const meta = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`p${i}`, i]));
    const { keyId } = await newKey(srv(), { meta });
    expect((await getKey(srv(), keyId)).meta).toEqual(meta);
  });

  it('accepts 100 roles of 100 characters each', async () => {
    const stem = uniq('r');
    const names = Array.from({ length: 100 }, (_, i) => `${stem}_${String(i).padStart(3, '0')}_`.padEnd(100, 'r'));
    for (const n of names) expect(n).toHaveLength(100);
    await Promise.all(names.map((n) => newRole(srv(), [], n)));
    const { keyId } = await newKey(srv(), { roles: names });
    expect([...(await getKey(srv(), keyId)).roles].sort()).toEqual([...names].sort());
  });

  it('accepts 1000 permissions of 100 characters each (missing ones are created)', async () => {
    const stem = uniq('p');
    const slugs = Array.from({ length: 1000 }, (_, i) => `${stem}.${String(i).padStart(4, '0')}.`.padEnd(100, 'p'));
    for (const s of slugs) expect(s).toHaveLength(100);
    const { keyId } = await newKey(srv(), { permissions: slugs });
    expect([...(await getKey(srv(), keyId)).permissions].sort()).toEqual([...slugs].sort());
    expectOk(await call(srv(), 'permissions.getPermission', { permission: slugs[999] }));
  });

  it('an existing externalId links the key to the same identity', async () => {
    const externalId = uniq('owner');
    const a = await newKey(srv(), { externalId });
    const b = await newKey(srv(), { externalId });
    expect((await getKey(srv(), a.keyId)).identity.id).toBe((await getKey(srv(), b.keyId)).identity.id);
  });
});
