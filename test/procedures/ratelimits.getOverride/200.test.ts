// ratelimits.getOverride 200: RatelimitOverride {overrideId, identifier, limit, duration}
// (no namespace field); exact first, else the longest matching pattern (reference §1.3, §4.3).
import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { createNamespace, namespaceIdOf } from '../../helpers/ratelimits.js';
import { call, expectOk } from '../../helpers/server.js';

const srv = inProcessServer();

async function set(namespace: string, identifier: string, limit: number, duration = 60_000): Promise<string> {
  return (expectOk(await call(srv(), 'ratelimits.setOverride', { namespace, identifier, limit, duration })) as { overrideId: string }).overrideId;
}

describe('ratelimits.getOverride 200', () => {
  it('exactly {overrideId, identifier, limit, duration}; both prefixes; by name or rlns_ id', async () => {
    const ns = await createNamespace(srv());
    const overrideId = await set(ns, 'user_1', 7, 120_000);
    const id = await namespaceIdOf(srv(), ns);
    for (const [procedure, namespace] of [['ratelimits.getOverride', ns], ['ratelimit.getOverride', ns], ['ratelimits.getOverride', id]] as const) {
      const data = expectOk(await call(srv(), procedure, { namespace, identifier: 'user_1' }));
      expect(data).toEqual({ overrideId, identifier: 'user_1', limit: 7, duration: 120_000 });
      expect(data).not.toHaveProperty('namespace');
      expect(data).not.toHaveProperty('namespaceId');
    }
  });

  it('resolution: exact beats wildcard, the longest matching pattern wins; the stored pattern is returned', async () => {
    const ns = await createNamespace(srv());
    const star = await set(ns, '*', 1);
    const user = await set(ns, 'user_*', 2);
    const premium = await set(ns, 'user_premium_*', 3);
    const exact = await set(ns, 'user_premium_9', 4);
    const get = async (identifier: string) => expectOk(await call(srv(), 'ratelimits.getOverride', { namespace: ns, identifier }));
    expect(await get('user_premium_9')).toEqual({ overrideId: exact, identifier: 'user_premium_9', limit: 4, duration: 60_000 });
    expect(await get('user_premium_8')).toEqual({ overrideId: premium, identifier: 'user_premium_*', limit: 3, duration: 60_000 });
    expect(await get('user_basic')).toMatchObject({ overrideId: user, identifier: 'user_*' });
    expect(await get('guest')).toMatchObject({ overrideId: star, identifier: '*' });
    // The pattern itself, passed literally, finds its own override.
    expect(await get('user_*')).toMatchObject({ overrideId: user });
  });
});
