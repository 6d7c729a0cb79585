// keys.createKey 400: every Limits-table bound just past its edge, plus the decisions
// (credits null, duplicate limit names, daily refill with refillDay, unknown/v1 fields).
import { beforeAll, describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, createApi } from '../../helpers/server.js';
import { expect400 } from '../../helpers/keys.js';

const srv = inProcessServer();
let apiId = '';
beforeAll(async () => {
  apiId = await createApi(srv());
});

const rl = (name: string) => ({ name, limit: 1, duration: 1000 });
const metaOf = (bytes: number) => ({ p: 'm'.repeat(bytes - JSON.stringify({ p: '' }).length) });

const CASES: [string, () => Record<string, unknown>, string][] = [
  ['apiId missing', () => ({ apiId: undefined }), 'apiId'],
  ['apiId 2 chars', () => ({ apiId: 'ab' }), 'apiId'],
  ['apiId 256 chars', () => ({ apiId: 'a'.repeat(256) }), 'apiId'],
  ['apiId with a bad character', () => ({ apiId: 'api-x!' }), 'apiId'],
  ['prefix empty', () => ({ prefix: '' }), 'prefix'],
  ['prefix 17 chars', () => ({ prefix: 'p'.repeat(17) }), 'prefix'],
  ['prefix with a dash', () => ({ prefix: 'sk-live' }), 'prefix'],
  ['name empty', () => ({ name: '' }), 'name'],
  ['name 256 chars', () => ({ name: 'n'.repeat(256) }), 'name'],
  ['byteLength 15', () => ({ byteLength: 15 }), 'byteLength'],
  ['byteLength 256', () => ({ byteLength: 256 }), 'byteLength'],
  ['byteLength not an integer', () => ({ byteLength: 16.5 }), 'byteLength'],
  ['externalId empty', () => ({ externalId: '' }), 'externalId'],
  ['externalId 256 chars', () => ({ externalId: 'e'.repeat(256) }), 'externalId'],
  ['externalId with a space', () => ({ externalId: 'a b' }), 'externalId'],
  ['externalId with @', () => ({ externalId: 'a@b' }), 'externalId'],
  ['externalId with /', () => ({ externalId: 'a/b' }), 'externalId'],
  ['101 roles', () => ({ roles: Array.from({ length: 101 }, (_, i) => `r${i}`) }), 'roles'],
  ['a role name of 0 chars', () => ({ roles: [''] }), 'roles'],
  ['a role name of 101 chars', () => ({ roles: ['r'.repeat(101)] }), 'roles'],
  ['1001 permissions', () => ({ permissions: Array.from({ length: 1001 }, (_, i) => `p.${i}`) }), 'permissions'],
  ['a permission of 0 chars', () => ({ permissions: [''] }), 'permissions'],
  ['a permission of 101 chars', () => ({ permissions: ['p'.repeat(101)] }), 'permissions'],
  ['expires -1', () => ({ expires: -1 }), 'expires'],
  ['expires 4102444800001', () => ({ expires: 4102444800001 }), 'expires'],
  ['51 ratelimits', () => ({ ratelimits: Array.from({ length: 51 }, (_, i) => rl(`limit_${i}`)) }), 'ratelimits'],
  ['duplicate ratelimit names', () => ({ ratelimits: [rl('same'), rl('same')] }), 'ratelimits'],
  ['a ratelimit without name', () => ({ ratelimits: [{ limit: 1, duration: 1000 }] }), 'ratelimits'],
  ['meta of 10241 bytes', () => ({ meta: metaOf(10241) }), 'meta'],
  ['meta of 5,208 characters but 10,408 bytes (UTF-8)', () => ({ meta: { p: 'é'.repeat(5200) } }), 'meta'],
  ['meta not an object', () => ({ meta: 'text' }), 'meta'],
  ['meta of 101 properties', () => ({ meta: Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`p${i}`, i])) }), 'meta'],
  ['credits null', () => ({ credits: null }), 'credits'],
  ['credits without remaining', () => ({ credits: {} }), 'credits'],
  ['credits.remaining negative', () => ({ credits: { remaining: -1 } }), 'credits'],
  ['daily refill with refillDay', () => ({ credits: { remaining: 5, refill: { interval: 'daily', amount: 5, refillDay: 3 } } }), 'refillDay'],
  ['refill with an unknown interval', () => ({ credits: { remaining: 5, refill: { interval: 'weekly', amount: 5 } } }), 'interval'],
  ['refillDay 32', () => ({ credits: { remaining: 5, refill: { interval: 'monthly', amount: 5, refillDay: 32 } } }), 'refillDay'],
  ['refill amount 0', () => ({ credits: { remaining: 5, refill: { interval: 'daily', amount: 0 } } }), 'amount'],
  ['refill with unlimited credits', () => ({ credits: { remaining: null, refill: { interval: 'daily', amount: 5 } } }), 'refill'],
  ['enabled not a boolean', () => ({ enabled: 'yes' }), 'enabled'],
  ['an unknown field', () => ({ color: 'blue' }), 'color'],
  ['the v1 ratelimit object', () => ({ ratelimit: { limit: 1, duration: 1000 } }), 'ratelimit'],
  ['the v1 remaining field', () => ({ remaining: 5 }), 'remaining'],
];

describe('keys.createKey 400', () => {
  it.each(CASES)('%s → 400 with errors[]', async (_why, body, field) => {
    const res = await call(srv(), 'keys.createKey', { apiId, ...body() });
    expect400(res, field);
  });

  it('meta holding a number beyond the double range (1e400) → 400, not a stored null', async () => {
    const res = await call(srv(), 'keys.createKey', null, { rawBody: `{"apiId":"${apiId}","meta":{"n":1e400}}` });
    expect400(res, 'meta');
  });

  it.each(['constructor', 'toString', '__proto__'])('an unknown field named like an Object.prototype member (%s) gets the plain message', async (field) => {
    const res = await call(srv(), 'keys.createKey', null, { rawBody: `{"apiId":"${apiId}","${field}":{"x":1}}` });
    expect400(res, field);
    expect(res.json.error.detail).toContain(`unknown field '${field}' is not accepted by keys.createKey.`);
  });

  it('a body of 200,000 bad items gets a bounded 400: 20 errors listed, the rest counted', async () => {
    const res = await call(srv(), 'keys.createKey', { apiId, permissions: new Array(200_000).fill('') });
    expect400(res, 'permissions');
    expect(res.json.error.errors).toHaveLength(20);
    expect(res.json.error.detail).toMatch(/\(and \d+ more\)\.$/);
    expect(res.text.length).toBeLessThan(20_000);
  });

  it('a refused request creates nothing', async () => {
    const before = await call(srv(), 'apis.listKeys', { apiId });
    expect(before.json.data).toEqual([]);
  });
});
