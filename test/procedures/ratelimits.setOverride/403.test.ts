// ratelimits.setOverride 403: ratelimits.*.set_override or ratelimits.<nsId>.set_override.
import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { createNamespace, keyWith, namespaceIdOf } from '../../helpers/ratelimits.js';
import { call, expectError, expectOk } from '../../helpers/server.js';

const srv = inProcessServer();

describe('ratelimits.setOverride 403', () => {
  it('without set_override → 403 naming it; with it on the namespace id (or the alias) → 200', async () => {
    const a = await createNamespace(srv());
    const b = await createNamespace(srv());
    const [idA, idB] = [await namespaceIdOf(srv(), a), await namespaceIdOf(srv(), b)];
    const body = (namespace: string) => ({ namespace, identifier: 'x', limit: 1, duration: 60_000 });
    const none = await keyWith(srv(), ['ratelimits.*.limit', 'ratelimits.*.read_override']);
    const error = expectError(await call(srv(), 'ratelimits.setOverride', body(a), { rootKey: none }), 403, 'insufficient_permissions');
    expect(error.detail).toContain('set_override');
    const scoped = await keyWith(srv(), [`ratelimit.${idA}.set_override`]);
    expect(expectOk(await call(srv(), 'ratelimit.setOverride', body(a), { rootKey: scoped })).overrideId).toMatch(/^rlor_/);
    expectError(await call(srv(), 'ratelimits.setOverride', body(b), { rootKey: scoped }), 403, 'insufficient_permissions');
    expectError(await call(srv(), 'ratelimits.setOverride', body(idB), { rootKey: scoped }), 403, 'insufficient_permissions');
    // Nothing was stored by the refused calls.
    expectError(await call(srv(), 'ratelimits.getOverride', { namespace: b, identifier: 'x' }), 404, 'ratelimit_override_not_found');
  });
});
