// keys.updateCredits 400: operation and value rules.
import { beforeAll, describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call } from '../../helpers/server.js';
import { expect400, getKey, newKey, type NewKey } from '../../helpers/keys.js';

const srv = inProcessServer();
let limited: NewKey;
let unlimited: NewKey;
beforeAll(async () => {
  limited = await newKey(srv(), { credits: { remaining: 5 } });
  unlimited = await newKey(srv());
});

describe('keys.updateCredits 400', () => {
  it.each([
    ['operation missing', { value: 1 }, 'operation'],
    ['an unknown operation', { operation: 'multiply', value: 2 }, 'operation'],
    ['a negative value', { operation: 'set', value: -1 }, 'value'],
    ['a fractional value', { operation: 'set', value: 1.5 }, 'value'],
    ['increment without value', { operation: 'increment' }, 'value'],
    ['set without value (null, written out, makes a key unlimited)', { operation: 'set' }, 'value'],
    ['decrement with value null', { operation: 'decrement', value: null }, 'value'],
    ['an unknown field', { operation: 'set', value: 1, refill: null }, 'refill'],
  ])('%s → 400', async (_why, body, field) => {
    expect400(await call(srv(), 'keys.updateCredits', { keyId: limited.keyId, ...body }), field);
  });

  it('a failure of a nullable field is one entry of error.errors, naming the branch the value matches', async () => {
    for (const [value, message] of [[-1, 'body.value must be >= 0'], [2 ** 53, 'body.value must be <= 9007199254740991'], ['5', 'body.value must be integer or null']] as const) {
      const res = await call(srv(), 'keys.updateCredits', { keyId: limited.keyId, operation: 'set', value });
      expect(res.status).toBe(400);
      expect(res.json.error.errors, JSON.stringify(value)).toEqual([{ location: 'body.value', message }]);
    }
  });

  it.each(['increment', 'decrement'])('%s on an unlimited key → 400', async (operation) => {
    expect400(await call(srv(), 'keys.updateCredits', { keyId: unlimited.keyId, operation, value: 1 }), 'unlimited');
    expect(await getKey(srv(), unlimited.keyId)).not.toHaveProperty('credits');
  });

  it('keyId bounds', async () => {
    expect400(await call(srv(), 'keys.updateCredits', { keyId: 'ke', operation: 'set', value: 1 }), 'keyId');
    expect400(await call(srv(), 'keys.updateCredits', { keyId: 'k'.repeat(256), operation: 'set', value: 1 }), 'keyId');
  });

  it('nothing changed', async () => {
    expect((await getKey(srv(), limited.keyId)).credits).toEqual({ remaining: 5 });
  });
});
