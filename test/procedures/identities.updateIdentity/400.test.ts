import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, expectError, expectOk } from '../../helpers/server.js';

const srv = inProcessServer({ env: { KEYWARD_MAX_BODY_BYTES: String(3 * 1024 * 1024) } });

const limit = { name: 'requests', limit: 1, duration: 1000 };

describe('identities.updateIdentity 400', () => {
  it.each([
    ['missing identity', { meta: {} }, 'identity'],
    ['empty identity', { identity: '' }, 'identity'],
    ['identity of 256 characters', { identity: 'i'.repeat(256) }, 'identity'],
    ['meta an array', { identity: 'x', meta: [] }, 'meta'],
    ['ratelimits null', { identity: 'x', ratelimits: null }, 'ratelimits'],
    ['51 rate limits', { identity: 'x', ratelimits: Array.from({ length: 51 }, (_, i) => ({ ...limit, name: `l-${i}` })) }, 'ratelimits'],
    ['a rate-limit duration of 999 ms', { identity: 'x', ratelimits: [{ ...limit, duration: 999 }] }, 'ratelimits'],
    ['externalId (cannot be changed)', { identity: 'x', externalId: 'y' }, 'externalId'],
  ])('%s → invalid_input naming the field', async (_why, body, field) => {
    const error = expectError(await call(srv(), 'identities.updateIdentity', body), 400, 'invalid_input');
    expect(error.errors?.some((e) => e.location.includes(field))).toBe(true);
  });

  it('duplicate rate-limit names or meta over 1 MiB → 400, and the identity is unchanged', async () => {
    expectOk(await call(srv(), 'identities.createIdentity', { externalId: 'stable', meta: { v: 1 }, ratelimits: [limit] }));
    const before = expectOk(await call(srv(), 'identities.getIdentity', { identity: 'stable' }));
    const dup = expectError(await call(srv(), 'identities.updateIdentity', { identity: 'stable', ratelimits: [limit, limit] }), 400, 'invalid_input');
    expect(dup.errors?.[0]?.location).toBe('body.ratelimits[1].name');
    const big = expectError(await call(srv(), 'identities.updateIdentity', { identity: 'stable', meta: { m: 'x'.repeat(1024 * 1024) } }), 400, 'invalid_input');
    expect(big.errors?.[0]?.location).toBe('body.meta');
    expect(expectOk(await call(srv(), 'identities.getIdentity', { identity: 'stable' }))).toEqual(before);
    const overhead = JSON.stringify({ m: '' }).length;
    expectOk(await call(srv(), 'identities.updateIdentity', { identity: 'stable', meta: { m: 'x'.repeat(1024 * 1024 - overhead) } }));
  });
});
