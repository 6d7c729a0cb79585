// keys.rerollKey 200: a new working key with the old key's settings; the old key expires
// (expiration 0: at once; otherwise rounded up to a whole minute).
import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, expectOk } from '../../helpers/server.js';
import { BASE58_RE, base58Decode, getKey, newKey, newRole, rootKeys, uniq, verify } from '../../helpers/keys.js';

const srv = inProcessServer();

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function reroll(keyId: string, expiration: number, rootKey?: string): Promise<any> {
  return expectOk(await call(srv(), 'keys.rerollKey', { keyId, expiration }, rootKey === undefined ? {} : { rootKey }));
}

describe('keys.rerollKey 200', () => {
  it('returns {keyId, key} of a new key with the same prefix and length; expiration 0 → old key EXPIRED at once', async () => {
    const old = await newKey(srv(), { prefix: 'rr', byteLength: 24 });
    const data = await reroll(old.keyId, 0);
    expect(Object.keys(data).sort()).toEqual(['key', 'keyId']);
    expect(data.keyId).not.toBe(old.keyId);
    expect(data.key).not.toBe(old.key);
    expect(data.key.startsWith('rr_')).toBe(true);
    expect(data.key.slice(3)).toMatch(BASE58_RE);
    expect(base58Decode(data.key.slice(3))).toHaveLength(24);
    expect(await verify(srv(), data.key)).toMatchObject({ valid: true, code: 'VALID', keyId: data.keyId });
    expect(await verify(srv(), old.key)).toMatchObject({ valid: false, code: 'EXPIRED', keyId: old.keyId });
    expect((await getKey(srv(), data.keyId)).start).toBe(data.key.slice(0, 7));
  });

  it('a key without prefix rerolls to a bare base58 key', async () => {
    const old = await newKey(srv());
    const data = await reroll(old.keyId, 0);
    expect(data.key).toMatch(BASE58_RE);
    expect(base58Decode(data.key)).toHaveLength(16);
  });

  it('the new key copies name, meta, identity, expiry, credits+refill, ratelimits, roles and permissions', async () => {
    const role = await newRole(srv(), ['rr.role']);
    const externalId = uniq('rr_owner');
    const old = await newKey(srv(), {
      name: 'rolled',
      meta: { m: [1, 2] },
      externalId,
      expires: 4000000000000,
      credits: { remaining: 8, refill: { interval: 'monthly', amount: 20, refillDay: 2 } },
      ratelimits: [{ name: 'rr_limit', limit: 4, duration: 5000, autoApply: true }],
      roles: [role],
      permissions: ['rr.direct'],
      enabled: true,
    });
    expectOk(await call(srv(), 'keys.verifyKey', { key: old.key, credits: { cost: 3 } }));
    const before = await getKey(srv(), old.keyId);
    const data = await reroll(old.keyId, 0);
    const fresh = await getKey(srv(), data.keyId);
    type Limit = { id: string };
    const limitIds = (k: Record<string, unknown>) => (k.ratelimits as Limit[]).map((r) => r.id);
    const strip = ({ keyId: _k, start: _s, createdAt: _c, updatedAt: _u, ratelimits, ...rest }: Record<string, unknown>) => ({ ...rest, ratelimits: (ratelimits as Limit[]).map(({ id: _i, ...r }) => r) });
    expect(strip(fresh)).toEqual(strip(before));
    // The copied limits are the new key's own, with ids of their own.
    expect(limitIds(fresh)).toHaveLength(1);
    expect(limitIds(fresh)[0]).toMatch(/^rl_/);
    expect(limitIds(fresh)[0]).not.toBe(limitIds(before)[0]);
    expect(limitIds(await getKey(srv(), old.keyId))).toEqual(limitIds(before));
    expect(fresh.credits).toEqual({ remaining: 5, refill: { interval: 'monthly', amount: 20, refillDay: 2 } });
    const v = await verify(srv(), data.key, { permissions: 'rr.role AND rr.direct' });
    expect(v).toMatchObject({ valid: true, name: 'rolled', meta: { m: [1, 2] }, identity: { externalId }, credits: 4 });
    expect(v.ratelimits).toEqual([expect.objectContaining({ name: 'rr_limit', limit: 4, remaining: 3 })]);
    const listed = expectOk(await call(srv(), 'apis.listKeys', { apiId: old.apiId })) as { keyId: string }[];
    expect(listed.map((k) => k.keyId).sort()).toEqual([old.keyId, data.keyId].sort());
  });

  it('expiration 60000: the old key keeps working and expires at a whole minute ≥ now + 60 s', async () => {
    const old = await newKey(srv());
    const t0 = Date.now();
    const data = await reroll(old.keyId, 60_000);
    const t1 = Date.now();
    expect((await verify(srv(), old.key)).code).toBe('VALID');
    expect((await verify(srv(), data.key)).code).toBe('VALID');
    const expires = (await getKey(srv(), old.keyId)).expires as number;
    expect(expires % 60_000).toBe(0);
    expect(expires).toBeGreaterThanOrEqual(t0 + 60_000);
    expect(expires).toBeLessThan(t1 + 120_000);
    expect(await getKey(srv(), data.keyId)).not.toHaveProperty('expires');
  });

  it('the largest expiration leaves the old key expiring no later than the latest expires a key may have', async () => {
    const old = await newKey(srv());
    await reroll(old.keyId, 4_102_444_800_000);
    const expires = (await getKey(srv(), old.keyId)).expires as number;
    expect(expires).toBe(4_102_444_800_000);
    // …so the value read can be written back.
    expectOk(await call(srv(), 'keys.updateKey', { keyId: old.keyId, expires }));
  });

  it('an old key that already expires sooner keeps its earlier expiry', async () => {
    const soon = Date.now() + 30_000;
    const old = await newKey(srv(), { expires: soon });
    await reroll(old.keyId, 3_600_000);
    expect((await getKey(srv(), old.keyId)).expires).toBe(soon);
  });

  it('the upper bound expiration 4102444800000 is accepted', async () => {
    const old = await newKey(srv());
    const data = await reroll(old.keyId, 4102444800000);
    expect((await verify(srv(), old.key)).code).toBe('VALID');
    expect((await verify(srv(), data.key)).code).toBe('VALID');
  });

  it('a rerolled key can be rerolled again', async () => {
    const old = await newKey(srv());
    const second = await reroll(old.keyId, 0);
    const third = await reroll(second.keyId, 0);
    expect((await verify(srv(), second.key)).code).toBe('EXPIRED');
    expect((await verify(srv(), third.key)).code).toBe('VALID');
  });

  it('apis.<apiId>.create_key is enough', async () => {
    const old = await newKey(srv());
    const { keys } = await rootKeys(srv(), [[`apis.${old.apiId}.create_key`]]);
    const data = await reroll(old.keyId, 0, keys[0]);
    expect((await verify(srv(), data.key)).code).toBe('VALID');
  });
});
