// ratelimits.multiLimit 403: ratelimits.*.limit or ratelimits.<nsId>.limit for EVERY
// namespace, ratelimits.*.create_namespace and ratelimits.*.limit for new ones; a 403 consumes
// nothing and creates no namespace.
import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { createNamespace, keyWith, limitOk, namespaceIdOf, uniq, HOUR as H } from '../../helpers/ratelimits.js';
import { call, expectError, expectOk } from '../../helpers/server.js';

const srv = inProcessServer();

describe('ratelimits.multiLimit 403', () => {
  it('a grant for one namespace only → 403 for a batch spanning two; nothing consumed', async () => {
    const a = await createNamespace(srv());
    const b = await createNamespace(srv());
    const [idA, idB] = [await namespaceIdOf(srv(), a), await namespaceIdOf(srv(), b)];
    const [key, both] = await Promise.all([keyWith(srv(), [`ratelimits.${idA}.limit`]), keyWith(srv(), [`ratelimits.${idA}.limit`, `ratelimit.${idB}.limit`])]);
    const items = [{ namespace: a, identifier: 'x', limit: 5, duration: H }, { namespace: b, identifier: 'x', limit: 5, duration: H }];
    const error = expectError(await call(srv(), 'ratelimits.multiLimit', items, { rootKey: key }), 403, 'insufficient_permissions');
    expect(error.detail).toContain(idB);
    expect(await limitOk(srv(), { ...items[0], cost: 0 })).toMatchObject({ remaining: 5 });
    expect(expectOk(await call(srv(), 'ratelimit.multiLimit', items, { rootKey: both }))).toMatchObject({ passed: true });
  });

  it('a new namespace in the batch without create_namespace → 403; nothing consumed on the existing one', async () => {
    const a = await createNamespace(srv());
    const key = await keyWith(srv(), ['ratelimits.*.limit']);
    const fresh = uniq();
    const items = [{ namespace: a, identifier: 'x', limit: 5, duration: H }, { namespace: fresh, identifier: 'x', limit: 5, duration: H }];
    const error = expectError(await call(srv(), 'ratelimits.multiLimit', items, { rootKey: key }), 403, 'insufficient_permissions');
    expect(error.detail).toContain('create_namespace');
    expect(await limitOk(srv(), { ...items[0], cost: 0 })).toMatchObject({ remaining: 5 });
    expectError(await call(srv(), 'ratelimits.listOverrides', { namespace: fresh }), 404, 'ratelimit_namespace_not_found');
  });

  it('a refused batch creates none of its new namespaces, wherever the refused item is', async () => {
    const a = await createNamespace(srv());
    const key = await keyWith(srv(), ['ratelimits.*.create_namespace', `ratelimits.${await namespaceIdOf(srv(), a)}.limit`]);
    const fresh = uniq();
    const items = [{ namespace: fresh, identifier: 'x', limit: 5, duration: H }, { namespace: a, identifier: 'x', limit: 5, duration: H }];
    expectError(await call(srv(), 'ratelimits.multiLimit', items, { rootKey: key }), 403, 'insufficient_permissions');
    expectError(await call(srv(), 'ratelimits.listOverrides', { namespace: fresh }), 404, 'ratelimit_namespace_not_found');
    expect(await limitOk(srv(), { ...items[1], cost: 0 })).toMatchObject({ remaining: 5 });
  });

  it('without any limit grant → 403; the alias ratelimit.*.limit works', async () => {
    const a = await createNamespace(srv());
    const items = [{ namespace: a, identifier: 'y', limit: 5, duration: H }];
    const [none, alias] = await Promise.all([keyWith(srv(), ['ratelimits.*.read_override']), keyWith(srv(), ['ratelimit.*.limit'])]);
    expectError(await call(srv(), 'ratelimits.multiLimit', items, { rootKey: none }), 403, 'insufficient_permissions');
    expect(expectOk(await call(srv(), 'ratelimits.multiLimit', items, { rootKey: alias }))).toMatchObject({ passed: true, limits: [{ remaining: 4 }] });
  });
});
