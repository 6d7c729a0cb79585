// ratelimits.deleteOverride 200: {} ; deletes exactly the stored identifier or pattern; the
// next limit call no longer uses it (reference/unkey-v2.md §1.3).
import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { createNamespace, limitOk, namespaceIdOf, HOUR as H } from '../../helpers/ratelimits.js';
import { call, expectError, expectOk } from '../../helpers/server.js';

const srv = inProcessServer();

describe('ratelimits.deleteOverride 200', () => {
  it('returns {}; the next limit call uses the request limit; getOverride → 404', async () => {
    const ns = await createNamespace(srv());
    expectOk(await call(srv(), 'ratelimits.setOverride', { namespace: ns, identifier: 'd', limit: 1, duration: H }));
    expect(await limitOk(srv(), { namespace: ns, identifier: 'd', limit: 50, duration: H })).toMatchObject({ success: true, limit: 1 });
    expect(await limitOk(srv(), { namespace: ns, identifier: 'd', limit: 50, duration: H })).toMatchObject({ success: false, limit: 1 });
    const res = await call(srv(), 'ratelimits.deleteOverride', { namespace: ns, identifier: 'd' });
    expect(expectOk(res)).toEqual({});
    const after = await limitOk(srv(), { namespace: ns, identifier: 'd', limit: 50, duration: H });
    expect(after).toMatchObject({ success: true, limit: 50 });
    expect(after).not.toHaveProperty('overrideId');
    expectError(await call(srv(), 'ratelimits.getOverride', { namespace: ns, identifier: 'd' }), 404, 'ratelimit_override_not_found');
  });

  it('a wildcard is deleted by passing the pattern literally (alias prefix, rlns_ id); a more general one then applies', async () => {
    const ns = await createNamespace(srv());
    const general = expectOk(await call(srv(), 'ratelimits.setOverride', { namespace: ns, identifier: 'u_*', limit: 5, duration: H })).overrideId;
    expectOk(await call(srv(), 'ratelimits.setOverride', { namespace: ns, identifier: 'u_vip_*', limit: 9, duration: H }));
    expect(await limitOk(srv(), { namespace: ns, identifier: 'u_vip_1', limit: 50, duration: H })).toMatchObject({ limit: 9 });
    const id = await namespaceIdOf(srv(), ns);
    expect(expectOk(await call(srv(), 'ratelimit.deleteOverride', { namespace: id, identifier: 'u_vip_*' }))).toEqual({});
    expect(await limitOk(srv(), { namespace: ns, identifier: 'u_vip_1', limit: 50, duration: H })).toMatchObject({ limit: 5, overrideId: general });
  });

  it('a long (hashed) identifier override can be deleted', async () => {
    const ns = await createNamespace(srv());
    const longId = '長'.repeat(300);
    expectOk(await call(srv(), 'ratelimits.setOverride', { namespace: ns, identifier: longId, limit: 1, duration: H }));
    expect(expectOk(await call(srv(), 'ratelimits.deleteOverride', { namespace: ns, identifier: longId }))).toEqual({});
    expectError(await call(srv(), 'ratelimits.getOverride', { namespace: ns, identifier: longId }), 404, 'ratelimit_override_not_found');
  });
});
