import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, expectError, expectOk } from '../../helpers/server.js';

// A body limit above 1 MiB, so the 1 MiB meta bound itself can be reached.
const srv = inProcessServer({ env: { KEYWARD_MAX_BODY_BYTES: String(3 * 1024 * 1024) } });

const limit = { name: 'requests', limit: 1, duration: 1000 };

describe('identities.createIdentity 400', () => {
  it.each([
    ['missing externalId', {}, 'externalId'],
    ['empty externalId', { externalId: '' }, 'externalId'],
    ['externalId of 256 characters', { externalId: 'e'.repeat(256) }, 'externalId'],
    ['externalId with a space', { externalId: 'a b' }, 'externalId'],
    ['externalId with a slash', { externalId: 'a/b' }, 'externalId'],
    ['meta an array', { externalId: 'x', meta: [1] }, 'meta'],
    ['meta a string', { externalId: 'x', meta: 'm' }, 'meta'],
    ['meta null', { externalId: 'x', meta: null }, 'meta'],
    ['meta of 101 properties', { externalId: 'x', meta: Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`p${i}`, i])) }, 'meta'],
    ['51 rate limits', { externalId: 'x', ratelimits: Array.from({ length: 51 }, (_, i) => ({ ...limit, name: `l-${i}` })) }, 'ratelimits'],
    ['a rate limit without name', { externalId: 'x', ratelimits: [{ limit: 1, duration: 1000 }] }, 'ratelimits'],
    ['a rate-limit name of 2 characters', { externalId: 'x', ratelimits: [{ ...limit, name: 'ab' }] }, 'ratelimits'],
    ['a rate-limit limit of 0', { externalId: 'x', ratelimits: [{ ...limit, limit: 0 }] }, 'ratelimits'],
    ['a rate-limit duration of 999 ms', { externalId: 'x', ratelimits: [{ ...limit, duration: 999 }] }, 'ratelimits'],
    ['an unknown rate-limit field', { externalId: 'x', ratelimits: [{ ...limit, cost: 1 }] }, 'ratelimits'],
    ['an unknown field', { externalId: 'x', environment: 'prod' }, 'environment'],
  ])('%s → invalid_input naming the field', async (_why, body, field) => {
    const error = expectError(await call(srv(), 'identities.createIdentity', body), 400, 'invalid_input');
    expect(error.errors?.some((e) => e.location.includes(field))).toBe(true);
  });

  it('meta of 100 properties is accepted; a number beyond the double range (1e400) is a 400, not a stored null', async () => {
    expectOk(await call(srv(), 'identities.createIdentity', { externalId: 'meta-100', meta: Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`p${i}`, i])) }));
    const error = expectError(await call(srv(), 'identities.createIdentity', null, { rawBody: '{"externalId":"meta-inf","meta":{"n":{"deep":1e400}}}' }), 400, 'invalid_input');
    expect(error.errors?.[0]?.location).toBe('body.meta.n.deep');
    expect(error.errors?.[0]?.message).toBe('is a number out of range');
    expectError(await call(srv(), 'identities.getIdentity', { identity: 'meta-inf' }), 404, 'identity_not_found');
  });

  it('two rate limits with one name → 400 naming the second; nothing is created', async () => {
    const error = expectError(await call(srv(), 'identities.createIdentity', { externalId: 'dup-limits', ratelimits: [limit, { ...limit, limit: 5 }] }), 400, 'invalid_input');
    expect(error.errors?.[0]?.location).toBe('body.ratelimits[1].name');
    expectError(await call(srv(), 'identities.getIdentity', { identity: 'dup-limits' }), 404, 'identity_not_found');
  });

  it('meta up to 1 MiB serialized is accepted; one byte more → 400', async () => {
    const overhead = JSON.stringify({ m: '' }).length;
    const atLimit = { m: 'x'.repeat(1024 * 1024 - overhead) };
    expect(JSON.stringify(atLimit).length).toBe(1024 * 1024);
    expectOk(await call(srv(), 'identities.createIdentity', { externalId: 'big-meta', meta: atLimit }));
    const error = expectError(await call(srv(), 'identities.createIdentity', { externalId: 'too-big-meta', meta: { m: `${atLimit.m}x` } }), 400, 'invalid_input');
    expect(error.errors?.[0]?.location).toBe('body.meta');
    expectError(await call(srv(), 'identities.getIdentity', { identity: 'too-big-meta' }), 404, 'identity_not_found');
  });
});
