// keys.updateKey 400: the createKey bounds on every updatable field, plus credits rules.
import { beforeAll, describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call } from '../../helpers/server.js';
import { expect400, getKey, newKey, type NewKey } from '../../helpers/keys.js';

const srv = inProcessServer();
let k: NewKey;
beforeAll(async () => {
  k = await newKey(srv(), { name: 'unchanged' });
});

const rl = (name: string) => ({ name, limit: 1, duration: 1000 });

describe('keys.updateKey 400', () => {
  it.each([
    ['keyId missing', { keyId: undefined }, 'keyId'],
    ['keyId 2 chars', { keyId: 'ke' }, 'keyId'],
    ['keyId 256 chars', { keyId: 'k'.repeat(256) }, 'keyId'],
    ['name empty', { name: '' }, 'name'],
    ['name 256 chars', { name: 'n'.repeat(256) }, 'name'],
    ['externalId empty', { externalId: '' }, 'externalId'],
    ['externalId 256 chars', { externalId: 'e'.repeat(256) }, 'externalId'],
    ['externalId with a space', { externalId: 'a b' }, 'externalId'],
    ['meta of 10241 bytes', { meta: { p: 'm'.repeat(10241 - 8) } }, 'meta'],
    ['meta an array', { meta: [1] }, 'meta'],
    ['meta of 101 properties', { meta: Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`p${i}`, i])) }, 'meta'],
    ['expires -1', { expires: -1 }, 'expires'],
    ['expires 4102444800001', { expires: 4102444800001 }, 'expires'],
    ['51 ratelimits', { ratelimits: Array.from({ length: 51 }, (_, i) => rl(`limit_${i}`)) }, 'ratelimits'],
    ['ratelimits null', { ratelimits: null }, 'ratelimits'],
    ['duplicate ratelimit names', { ratelimits: [rl('twice'), rl('twice')] }, 'ratelimits'],
    ['101 roles', { roles: Array.from({ length: 101 }, (_, i) => `r${i}`) }, 'roles'],
    ['a role of 101 chars', { roles: ['r'.repeat(101)] }, 'roles'],
    ['1001 permissions', { permissions: Array.from({ length: 1001 }, (_, i) => `p.${i}`) }, 'permissions'],
    ['a permission of 101 chars', { permissions: ['p'.repeat(101)] }, 'permissions'],
    ['enabled null', { enabled: null }, 'enabled'],
    ['daily refill with refillDay', { credits: { remaining: 1, refill: { interval: 'daily', amount: 1, refillDay: 2 } } }, 'refillDay'],
    ['a refill on an unlimited key without remaining', { credits: { refill: { interval: 'daily', amount: 1 } } }, 'remaining'],
    ['a refill with remaining null', { credits: { remaining: null, refill: { interval: 'daily', amount: 1 } } }, 'refill'],
    ['credits.remaining negative', { credits: { remaining: -5 } }, 'remaining'],
    ['an unknown field', { apiId: 'api_xyz' }, 'apiId'],
    ['the v1 ratelimit object', { ratelimit: { limit: 1, duration: 1000 } }, 'ratelimit'],
  ])('%s → 400', async (_why, body, field) => {
    expect400(await call(srv(), 'keys.updateKey', { keyId: k.keyId, ...body }), field);
  });

  it.each([
    ['{"x":[1e400]}', 'body.meta.x[0]'],
    ['{"a":{"b":-1e999}}', 'body.meta.a.b'],
    ['{"n":1e400}', 'body.meta.n'],
  ])('meta %s (a number out of a double\'s range) → 400 at %s', async (meta, location) => {
    const res = await call(srv(), 'keys.updateKey', undefined, { rawBody: `{"keyId":"${k.keyId}","meta":${meta}}` });
    expect400(res);
    expect(res.json.error.errors).toEqual([expect.objectContaining({ location, message: 'is a number out of range' })]);
  });

  it('a refused update changes nothing', async () => {
    const got = await getKey(srv(), k.keyId);
    expect(got.name).toBe('unchanged');
    expect(got).not.toHaveProperty('updatedAt');
    expect(got).not.toHaveProperty('credits');
  });
});
