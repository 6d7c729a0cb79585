// ratelimits.listOverrides 400/403/404: limit 1–100, cursor a string; namespace must exist;
// read_override needed.
import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { createNamespace, keyWith, uniq } from '../../helpers/ratelimits.js';
import { call, expectError } from '../../helpers/server.js';

const srv = inProcessServer();

describe('ratelimits.listOverrides 400', () => {
  it.each([
    ['limit 0', { namespace: 'n', limit: 0 }, 'limit'],
    ['limit 101', { namespace: 'n', limit: 101 }, 'limit'],
    ['limit a string', { namespace: 'n', limit: '10' }, 'limit'],
    ['cursor a number', { namespace: 'n', cursor: 5 }, 'cursor'],
    ['missing namespace', {}, 'namespace'],
    ['namespace 513 chars', { namespace: 'n'.repeat(513) }, 'namespace'],
    ['unknown field', { namespace: 'n', identifier: 'x' }, 'identifier'],
  ])('%s → invalid_input', async (_why, body, field) => {
    const error = expectError(await call(srv(), 'ratelimits.listOverrides', body), 400, 'invalid_input');
    expect(error.detail + JSON.stringify(error.errors)).toContain(field);
  });

  it('a garbage cursor is a 400, not a 500', async () => {
    const ns = await createNamespace(srv());
    const res = await call(srv(), 'ratelimits.listOverrides', { namespace: ns, cursor: '%%%not-a-cursor%%%' });
    expect([200, 400]).toContain(res.status);
  });
});

describe('ratelimits.listOverrides 404 / 403', () => {
  it('a missing namespace → ratelimit_namespace_not_found', async () => {
    expectError(await call(srv(), 'ratelimits.listOverrides', { namespace: uniq() }), 404, 'ratelimit_namespace_not_found');
    expectError(await call(srv(), 'ratelimit.listOverrides', { namespace: 'rlns_doesnotexist00000000' }), 404, 'ratelimit_namespace_not_found');
  });

  it('without read_override → 403', async () => {
    const ns = await createNamespace(srv());
    const key = await keyWith(srv(), ['ratelimits.*.limit', 'ratelimits.*.set_override']);
    expectError(await call(srv(), 'ratelimits.listOverrides', { namespace: ns }, { rootKey: key }), 403, 'insufficient_permissions');
  });
});
