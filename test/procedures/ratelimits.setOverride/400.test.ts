// ratelimits.setOverride 400: namespace/identifier 1–512, limit ≥ 0, duration ≥ 1000 (and a safe integer).
import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, expectError } from '../../helpers/server.js';

const srv = inProcessServer();
const ok = { namespace: 'ns', identifier: 'u', limit: 10, duration: 60_000 };

describe('ratelimits.setOverride 400', () => {
  it.each([
    ['duration 999', { ...ok, duration: 999 }, 'duration'],
    ['duration 0', { ...ok, duration: 0 }, 'duration'],
    ['duration past the largest safe integer', { ...ok, duration: 2 ** 53 }, 'duration'],
    ['limit -1', { ...ok, limit: -1 }, 'limit'],
    ['limit 1.5', { ...ok, limit: 1.5 }, 'limit'],
    ['identifier empty', { ...ok, identifier: '' }, 'identifier'],
    ['identifier 513 chars', { ...ok, identifier: 'i'.repeat(513) }, 'identifier'],
    ['namespace empty', { ...ok, namespace: '' }, 'namespace'],
    ['namespace 513 chars', { ...ok, namespace: 'n'.repeat(513) }, 'namespace'],
    ['missing limit', { namespace: 'n', identifier: 'u', duration: 60_000 }, 'limit'],
    ['missing duration', { namespace: 'n', identifier: 'u', limit: 1 }, 'duration'],
    ['missing identifier', { namespace: 'n', limit: 1, duration: 60_000 }, 'identifier'],
    ['unknown field cost', { ...ok, cost: 1 }, 'cost'],
    ['v1 async', { ...ok, async: false }, 'async'],
  ])('%s → invalid_input naming the field', async (_why, body, field) => {
    const error = expectError(await call(srv(), 'ratelimits.setOverride', body), 400, 'invalid_input');
    expect(error.errors?.length).toBeGreaterThan(0);
    expect(error.detail + JSON.stringify(error.errors)).toContain(field);
  });
});
