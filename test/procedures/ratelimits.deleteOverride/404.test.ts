// ratelimits.deleteOverride 403/404: namespace missing → ratelimit_namespace_not_found;
// nothing stored under exactly that identifier → ratelimit_override_not_found; the
// permission is checked before the override lookup.
import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { createNamespace, keyWith, uniq } from '../../helpers/ratelimits.js';
import { call, expectError, expectOk } from '../../helpers/server.js';

const srv = inProcessServer();

describe('ratelimits.deleteOverride 404', () => {
  it('a missing namespace → ratelimit_namespace_not_found', async () => {
    expectError(await call(srv(), 'ratelimits.deleteOverride', { namespace: uniq(), identifier: 'x' }), 404, 'ratelimit_namespace_not_found');
    expectError(await call(srv(), 'ratelimit.deleteOverride', { namespace: 'rlns_doesnotexist00000000', identifier: 'x' }), 404, 'ratelimit_namespace_not_found');
  });

  it('a missing override, a second delete, or an identifier that only matches a pattern → ratelimit_override_not_found', async () => {
    const ns = await createNamespace(srv());
    expectError(await call(srv(), 'ratelimits.deleteOverride', { namespace: ns, identifier: 'none' }), 404, 'ratelimit_override_not_found');
    expectOk(await call(srv(), 'ratelimits.setOverride', { namespace: ns, identifier: 'p_*', limit: 1, duration: 60_000 }));
    expectError(await call(srv(), 'ratelimits.deleteOverride', { namespace: ns, identifier: 'p_1' }), 404, 'ratelimit_override_not_found');
    expectOk(await call(srv(), 'ratelimits.deleteOverride', { namespace: ns, identifier: 'p_*' }));
    expectError(await call(srv(), 'ratelimits.deleteOverride', { namespace: ns, identifier: 'p_*' }), 404, 'ratelimit_override_not_found');
  });

  it('without delete_override → 403, even for an override that does not exist', async () => {
    const ns = await createNamespace(srv());
    expectOk(await call(srv(), 'ratelimits.setOverride', { namespace: ns, identifier: 'keep', limit: 1, duration: 60_000 }));
    const key = await keyWith(srv(), ['ratelimits.*.set_override', 'ratelimits.*.read_override']);
    for (const identifier of ['keep', 'missing']) {
      const error = expectError(await call(srv(), 'ratelimits.deleteOverride', { namespace: ns, identifier }, { rootKey: key }), 403, 'insufficient_permissions');
      expect(error.detail).toContain('delete_override');
    }
    expectOk(await call(srv(), 'ratelimits.getOverride', { namespace: ns, identifier: 'keep' }));
  });
});
