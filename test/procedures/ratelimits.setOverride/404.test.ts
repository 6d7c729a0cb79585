// ratelimits.setOverride 404: the namespace must exist; it is not created here.
import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { uniq } from '../../helpers/ratelimits.js';
import { call, expectError, foreignRootKey } from '../../helpers/server.js';

const srv = inProcessServer();

describe('ratelimits.setOverride 404', () => {
  it('a missing namespace → ratelimit_namespace_not_found, and it stays missing', async () => {
    const ns = uniq();
    for (const procedure of ['ratelimits.setOverride', 'ratelimit.setOverride']) {
      const error = expectError(await call(srv(), procedure, { namespace: ns, identifier: 'x', limit: 1, duration: 60_000 }), 404, 'ratelimit_namespace_not_found');
      expect(error.title).toBe('Not Found');
    }
    expectError(await call(srv(), 'ratelimits.listOverrides', { namespace: ns }), 404, 'ratelimit_namespace_not_found');
    expectError(await call(srv(), 'ratelimits.setOverride', { namespace: 'rlns_doesnotexist00000000', identifier: 'x', limit: 1, duration: 60_000 }), 404, 'ratelimit_namespace_not_found');
  });

  it("another workspace's namespace is not found", async () => {
    const ns = uniq();
    await call(srv(), 'ratelimits.limit', { namespace: ns, identifier: 'x', limit: 1, duration: 1_000, cost: 0 });
    const foreign = await foreignRootKey(srv());
    expectError(await call(srv(), 'ratelimits.setOverride', { namespace: ns, identifier: 'x', limit: 1, duration: 60_000 }, { rootKey: foreign }), 404, 'ratelimit_namespace_not_found');
  });
});
