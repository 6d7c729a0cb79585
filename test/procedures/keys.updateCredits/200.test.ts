// keys.updateCredits 200: set / increment / decrement (floors at 0), result {remaining, refill?}.
import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, expectOk } from '../../helpers/server.js';
import { getKey, newKey, rootKeys, verify } from '../../helpers/keys.js';

const srv = inProcessServer();

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function credits(keyId: string, operation: string, value?: number | null): Promise<any> {
  return expectOk(await call(srv(), 'keys.updateCredits', value === undefined ? { keyId, operation } : { keyId, operation, value }));
}

describe('keys.updateCredits 200', () => {
  it('set, increment, decrement; the result is exactly {remaining}', async () => {
    const { keyId, key } = await newKey(srv(), { credits: { remaining: 10 } });
    expect(await credits(keyId, 'set', 3)).toEqual({ remaining: 3 });
    expect(await credits(keyId, 'increment', 4)).toEqual({ remaining: 7 });
    expect(await credits(keyId, 'decrement', 2)).toEqual({ remaining: 5 });
    expect((await getKey(srv(), keyId)).credits).toEqual({ remaining: 5 });
    expect((await verify(srv(), key)).credits).toBe(4);
  });

  it('decrement floors at 0, and the key is then USAGE_EXCEEDED', async () => {
    const { keyId, key } = await newKey(srv(), { credits: { remaining: 2 } });
    expect(await credits(keyId, 'decrement', 5)).toEqual({ remaining: 0 });
    expect(await verify(srv(), key)).toMatchObject({ valid: false, code: 'USAGE_EXCEEDED' });
  });

  it('set 0 and increment by 0 are allowed', async () => {
    const { keyId } = await newKey(srv(), { credits: { remaining: 2 } });
    expect(await credits(keyId, 'set', 0)).toEqual({ remaining: 0 });
    expect(await credits(keyId, 'increment', 0)).toEqual({ remaining: 0 });
  });

  it('the refill is kept and returned', async () => {
    const refill = { interval: 'monthly', amount: 100, refillDay: 5 };
    const { keyId } = await newKey(srv(), { credits: { remaining: 10, refill } });
    expect(await credits(keyId, 'decrement', 1)).toEqual({ remaining: 9, refill });
    expect(await credits(keyId, 'set', 50)).toEqual({ remaining: 50, refill });
  });

  it('set on an unlimited key gives it a balance; set null makes it unlimited again', async () => {
    const { keyId, key } = await newKey(srv());
    expect(await credits(keyId, 'set', 1)).toEqual({ remaining: 1 });
    expect((await verify(srv(), key)).credits).toBe(0);
    expect(await credits(keyId, 'set', null)).toEqual({ remaining: null });
    expect(await getKey(srv(), keyId)).not.toHaveProperty('credits');
    expect((await verify(srv(), key)).valid).toBe(true);
  });

  it('increment saturates at Number.MAX_SAFE_INTEGER', async () => {
    const { keyId } = await newKey(srv(), { credits: { remaining: Number.MAX_SAFE_INTEGER - 1 } });
    expect(await credits(keyId, 'increment', 10)).toEqual({ remaining: Number.MAX_SAFE_INTEGER });
  });

  it('apis.<apiId>.update_key is enough', async () => {
    const { keyId, apiId } = await newKey(srv(), { credits: { remaining: 1 } });
    const { keys } = await rootKeys(srv(), [[`apis.${apiId}.update_key`]]);
    expect(expectOk(await call(srv(), 'keys.updateCredits', { keyId, operation: 'increment', value: 1 }, { rootKey: keys[0] }))).toEqual({ remaining: 2 });
  });
});
