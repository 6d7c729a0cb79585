// Refill is applied lazily at the next read after the boundary (DESIGN.md): getKey shows the
// refilled balance, and updateCredits / updateKey / verifyKey work from the refilled balance
// without the refill being applied a second time. The boundary is put in the past by writing
// the credits record's lastRefillAtMs directly (the server has no test clock).
// Status asserted: 200 throughout.
import { beforeAll, describe, expect, it } from 'vitest';
import { liveServer } from '../../helpers/live.js';
import { call, expectOk } from '../../helpers/server.js';
import { getKey, newKey, setCreditsDirect, verify, type NewKey } from '../../helpers/keys.js';

const srv = liveServer();
const DAY = 86_400_000;
const keys: Record<string, NewKey> = {};

beforeAll(async () => {
  const now = Date.now();
  const todayUtc = now - (now % DAY);
  for (const name of ['due', 'notDue', 'monthly', 'decrement', 'increment', 'verify', 'updateKey', 'set']) {
    keys[name] = await newKey(srv(), { credits: { remaining: 2, refill: name === 'monthly' ? { interval: 'monthly', amount: 10, refillDay: 1 } : { interval: 'daily', amount: 10 } } });
  }
  const twoDaysAgo = now - 2 * DAY;
  await setCreditsDirect(srv(), [
    [keys.due!.keyId, 2, 10, 0, twoDaysAgo],
    [keys.notDue!.keyId, 2, 10, 0, todayUtc + 1],
    [keys.monthly!.keyId, 2, 10, 1, now - 40 * DAY],
    [keys.decrement!.keyId, 2, 10, 0, twoDaysAgo],
    [keys.increment!.keyId, 2, 10, 0, twoDaysAgo],
    [keys.verify!.keyId, 2, 10, 0, twoDaysAgo],
    [keys.updateKey!.keyId, 2, 10, 0, twoDaysAgo],
    [keys.set!.keyId, 2, 10, 0, twoDaysAgo],
  ]);
});

describe('lazy refill', () => {
  it('a daily refill past its boundary: getKey shows the amount (set, not added)', async () => {
    expect((await getKey(srv(), keys.due!.keyId)).credits).toEqual({ remaining: 10, refill: { interval: 'daily', amount: 10 } });
  });

  it('before the boundary: no refill', async () => {
    expect((await getKey(srv(), keys.notDue!.keyId)).credits.remaining).toBe(2);
  });

  it('a monthly refill past its day: refilled', async () => {
    expect((await getKey(srv(), keys.monthly!.keyId)).credits.remaining).toBe(10);
  });

  it('verifyKey consumes from the refilled balance, once', async () => {
    expect((await verify(srv(), keys.verify!.key)).credits).toBe(9);
    expect((await verify(srv(), keys.verify!.key)).credits).toBe(8);
    expect((await getKey(srv(), keys.verify!.keyId)).credits.remaining).toBe(8);
  });

  it('updateCredits decrement works from the refilled balance and the refill does not re-apply', async () => {
    expect(expectOk(await call(srv(), 'keys.updateCredits', { keyId: keys.decrement!.keyId, operation: 'decrement', value: 3 })).remaining).toBe(7);
    expect((await getKey(srv(), keys.decrement!.keyId)).credits.remaining).toBe(7);
    expect((await verify(srv(), keys.decrement!.key)).credits).toBe(6);
  });

  it('updateCredits increment works from the refilled balance and the refill does not re-apply', async () => {
    expect(expectOk(await call(srv(), 'keys.updateCredits', { keyId: keys.increment!.keyId, operation: 'increment', value: 1 })).remaining).toBe(11);
    expect((await getKey(srv(), keys.increment!.keyId)).credits.remaining).toBe(11);
  });

  it('updateCredits set: the set value stands (no refill on top of it)', async () => {
    expect(expectOk(await call(srv(), 'keys.updateCredits', { keyId: keys.set!.keyId, operation: 'set', value: 4 })).remaining).toBe(4);
    expect((await getKey(srv(), keys.set!.keyId)).credits.remaining).toBe(4);
    expect((await verify(srv(), keys.set!.key)).credits).toBe(3);
  });

  it('updateKey changing only the refill keeps the refilled balance', async () => {
    const res = expectOk(await call(srv(), 'keys.updateKey', { keyId: keys.updateKey!.keyId, credits: { refill: { interval: 'daily', amount: 20 } } }));
    expect(res.credits.remaining).toBe(10);
    expect((await getKey(srv(), keys.updateKey!.keyId)).credits).toEqual({ remaining: 10, refill: { interval: 'daily', amount: 20 } });
  });
});
