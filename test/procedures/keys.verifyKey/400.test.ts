import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, createApi, expectError, expectOk } from '../../helpers/server.js';

const srv = inProcessServer();

let cached: string | undefined;
async function validKey(): Promise<string> {
  if (cached !== undefined) return cached;
  const apiId = await createApi(srv());
  cached = (expectOk(await call(srv(), 'keys.createKey', { apiId, permissions: ['a'], credits: { remaining: 1000 } })) as { key: string }).key;
  return cached;
}

describe('keys.verifyKey 400', () => {
  it.each([
    ['missing key', {}, 'key'],
    ['empty key', { key: '' }, 'key'],
    ['key too long', { key: 'k'.repeat(513) }, 'key'],
    ['key a number', { key: 12345 }, 'key'],
    ['key null', { key: null }, 'key'],
    ['negative cost', { key: 'x', credits: { cost: -1 } }, 'cost'],
    ['fractional cost', { key: 'x', credits: { cost: 1.5 } }, 'cost'],
    ['cost a string', { key: 'x', credits: { cost: '1' } }, 'cost'],
    ['credits without cost', { key: 'x', credits: {} }, 'cost'],
    ['unknown field in credits', { key: 'x', credits: { cost: 1, remaining: 3 } }, 'remaining'],
    ['empty permission query', { key: 'x', permissions: '' }, 'permissions'],
    ['permission query too long', { key: 'x', permissions: 'a'.repeat(1001) }, 'permissions'],
    ['v1 object permission query', { key: 'x', permissions: { and: ['a'] } }, 'permissions'],
    ['ratelimits not an array', { key: 'x', ratelimits: { name: 'a' } }, 'ratelimits'],
    ['ratelimit without name', { key: 'x', ratelimits: [{ cost: 1 }] }, 'name'],
    ['ratelimit with empty name', { key: 'x', ratelimits: [{ name: '' }] }, 'name'],
    ['ratelimit with a name of 2 characters (names are 3–255, as Unkey)', { key: 'x', ratelimits: [{ name: 'ab' }] }, 'name'],
    ['ratelimit with negative cost', { key: 'x', ratelimits: [{ name: 'abc', cost: -1 }] }, 'cost'],
    ['ad-hoc limit without duration', { key: 'x', ratelimits: [{ name: 'abc', limit: 5 }] }, 'duration'],
    ['ad-hoc duration without limit', { key: 'x', ratelimits: [{ name: 'abc', duration: 60000 }] }, 'limit'],
    ['ad-hoc duration under 1000 ms', { key: 'x', ratelimits: [{ name: 'abc', limit: 5, duration: 999 }] }, 'duration'],
    ['ad-hoc negative limit', { key: 'x', ratelimits: [{ name: 'abc', limit: -1, duration: 60000 }] }, 'limit'],
    ['too many ratelimits', { key: 'x', ratelimits: Array.from({ length: 101 }, (_, i) => ({ name: `r${i}` })) }, 'ratelimits'],
    ['unknown field', { key: 'x', apiId: 'api_123' }, 'apiId'],
    ['v1 field async', { key: 'x', async: true }, 'async'],
    ['v1 field ratelimit', { key: 'x', ratelimit: { cost: 1 } }, 'ratelimit'],
    ['v1 field resources', { key: 'x', resources: {} }, 'resources'],
  ])('%s → invalid_input', async (_why, body, field) => {
    const error = expectError(await call(srv(), 'keys.verifyKey', body), 400, 'invalid_input');
    expect(error.errors?.length).toBeGreaterThan(0);
    expect(error.errors?.some((e) => e.location.includes(field) || e.message.includes(field))).toBe(true);
  });

  it.each(['a AND', '(a OR b', 'a b', 'a AND ()', 'a $ b', ')', 'OR a'])('query %j on a found key → permissions_query_syntax_error', async (permissions) => {
    const key = await validKey();
    const error = expectError(await call(srv(), 'keys.verifyKey', { key, permissions }), 400, 'permissions_query_syntax_error');
    expect(error.title).toBe('Bad Request');
    expect(Array.isArray(error.errors)).toBe(true);
  });

  it('a rejected request consumes no credits', async () => {
    const key = await validKey();
    const before = (expectOk(await call(srv(), 'keys.verifyKey', { key, credits: { cost: 0 } })) as { credits: number }).credits;
    expectError(await call(srv(), 'keys.verifyKey', { key, permissions: 'a AND' }), 400);
    expectError(await call(srv(), 'keys.verifyKey', { key, credits: { cost: -1 } }), 400);
    expect(expectOk(await call(srv(), 'keys.verifyKey', { key, credits: { cost: 0 } })).credits).toBe(before);
  });
});
