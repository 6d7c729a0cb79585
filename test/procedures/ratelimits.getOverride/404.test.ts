// ratelimits.getOverride 403/404: namespace missing → ratelimit_namespace_not_found; no
// matching override → ratelimit_override_not_found; read_override needed.
import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { createNamespace, keyWith, uniq } from '../../helpers/ratelimits.js';
import { call, expectError, expectOk } from '../../helpers/server.js';

const srv = inProcessServer();

describe('ratelimits.getOverride 404', () => {
  it('a missing namespace → ratelimit_namespace_not_found', async () => {
    for (const namespace of [uniq(), 'rlns_doesnotexist00000000']) {
      expectError(await call(srv(), 'ratelimits.getOverride', { namespace, identifier: 'x' }), 404, 'ratelimit_namespace_not_found');
      expectError(await call(srv(), 'ratelimit.getOverride', { namespace, identifier: 'x' }), 404, 'ratelimit_namespace_not_found');
    }
  });

  it('no override matches → ratelimit_override_not_found (also after deletion, and for a non-matching pattern)', async () => {
    const ns = await createNamespace(srv());
    expectError(await call(srv(), 'ratelimits.getOverride', { namespace: ns, identifier: 'nobody' }), 404, 'ratelimit_override_not_found');
    expectOk(await call(srv(), 'ratelimits.setOverride', { namespace: ns, identifier: 'abc_*', limit: 1, duration: 60_000 }));
    expectError(await call(srv(), 'ratelimits.getOverride', { namespace: ns, identifier: 'abd_1' }), 404, 'ratelimit_override_not_found');
    expectOk(await call(srv(), 'ratelimits.deleteOverride', { namespace: ns, identifier: 'abc_*' }));
    expectError(await call(srv(), 'ratelimits.getOverride', { namespace: ns, identifier: 'abc_1' }), 404, 'ratelimit_override_not_found');
  });

  it('without read_override → 403', async () => {
    const ns = await createNamespace(srv());
    const [key, alias] = await Promise.all([keyWith(srv(), ['ratelimits.*.set_override', 'ratelimits.*.limit']), keyWith(srv(), ['ratelimit.*.read_override'])]);
    const error = expectError(await call(srv(), 'ratelimits.getOverride', { namespace: ns, identifier: 'x' }, { rootKey: key }), 403, 'insufficient_permissions');
    expect(error.detail).toContain('read_override');
    expectError(await call(srv(), 'ratelimits.getOverride', { namespace: ns, identifier: 'x' }, { rootKey: alias }), 404, 'ratelimit_override_not_found');
  });
});
