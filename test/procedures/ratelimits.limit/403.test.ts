// ratelimits.limit 401/403: ratelimits.*.limit or ratelimits.<namespaceId>.limit, and
// ratelimits.*.create_namespace (and ratelimits.*.limit) for a new namespace, created only
// once the call is allowed (reference/unkey-v2.md §1.3; DESIGN.md §2
// "Authentication and tenancy": Unkey's `ratelimit.` resource name is an alias).
import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { createNamespace, keyWith, limitOk, LONG_WINDOW, namespaceIdOf, uniq } from '../../helpers/ratelimits.js';
import { call, expectError, foreignRootKey } from '../../helpers/server.js';

const srv = inProcessServer();
// A long window: no bucket boundary (epoch-aligned) may fall between counted calls.
const body = (namespace: string) => ({ namespace, identifier: 'u', limit: 5, duration: LONG_WINDOW });

describe('ratelimits.limit 403', () => {
  it('no or unknown root key → 401', async () => {
    expectError(await call(srv(), 'ratelimits.limit', body(uniq()), { rootKey: null }), 401);
    expectError(await call(srv(), 'ratelimits.limit', body(uniq()), { rootKey: 'kwtest_not_a_real_key_000000' }), 401);
  });

  it('without ratelimits.*.limit → 403 naming it (existing and new namespace)', async () => {
    const ns = await createNamespace(srv());
    const key = await keyWith(srv(), ['ratelimits.*.create_namespace', 'ratelimits.*.set_override']);
    const error = expectError(await call(srv(), 'ratelimits.limit', body(ns), { rootKey: key }), 403, 'insufficient_permissions');
    expect(error.title).toBe('Forbidden');
    expect(error.detail).toMatch(/ratelimits\.\*\.limit/);
    const fresh = uniq();
    expectError(await call(srv(), 'ratelimits.limit', body(fresh), { rootKey: key }), 403, 'insufficient_permissions');
    // A refused call changes nothing: the namespace it named was not created.
    expectError(await call(srv(), 'ratelimits.listOverrides', { namespace: fresh }), 404, 'ratelimit_namespace_not_found');
  });

  it('a new namespace needs ratelimits.*.limit: a grant on one namespace id cannot cover it', async () => {
    const a = await createNamespace(srv());
    const key = await keyWith(srv(), ['ratelimits.*.create_namespace', `ratelimits.${await namespaceIdOf(srv(), a)}.limit`]);
    const fresh = uniq();
    const error = expectError(await call(srv(), 'ratelimits.limit', body(fresh), { rootKey: key }), 403, 'insufficient_permissions');
    expect(error.detail).toContain("'ratelimits.*.limit'");
    expectError(await call(srv(), 'ratelimits.listOverrides', { namespace: fresh }), 404, 'ratelimit_namespace_not_found');
    expect(await limitOk(srv(), body(a), 'ratelimits.limit', key)).toMatchObject({ success: true });
  });

  it('without ratelimits.*.create_namespace a new namespace → 403 and is not created; an existing one works', async () => {
    const key = await keyWith(srv(), ['ratelimits.*.limit']);
    const fresh = uniq();
    const error = expectError(await call(srv(), 'ratelimits.limit', body(fresh), { rootKey: key }), 403, 'insufficient_permissions');
    expect(error.detail).toContain('create_namespace');
    expectError(await call(srv(), 'ratelimits.listOverrides', { namespace: fresh }), 404, 'ratelimit_namespace_not_found');
    const existing = await createNamespace(srv());
    expect(await limitOk(srv(), body(existing), 'ratelimits.limit', key)).toMatchObject({ success: true });
  });

  it('ratelimits.<namespaceId>.limit allows that namespace only', async () => {
    const a = await createNamespace(srv());
    const b = await createNamespace(srv());
    const [idA, idB] = [await namespaceIdOf(srv(), a), await namespaceIdOf(srv(), b)];
    const key = await keyWith(srv(), [`ratelimits.${idA}.limit`]);
    expect(await limitOk(srv(), body(a), 'ratelimits.limit', key)).toMatchObject({ success: true });
    expect(await limitOk(srv(), body(idA), 'ratelimit.limit', key)).toMatchObject({ success: true });
    const error = expectError(await call(srv(), 'ratelimits.limit', body(b), { rootKey: key }), 403, 'insufficient_permissions');
    expect(error.detail).toContain(idB);
    expectError(await call(srv(), 'ratelimit.limit', body(idB), { rootKey: key }), 403, 'insufficient_permissions');
  });

  it("Unkey's names ratelimit.*.limit / ratelimit.*.create_namespace are aliases", async () => {
    const key = await keyWith(srv(), ['ratelimit.*.limit', 'ratelimit.*.create_namespace']);
    const ns = uniq();
    expect(await limitOk(srv(), body(ns), 'ratelimit.limit', key)).toMatchObject({ success: true, remaining: 4 });
    expect(await limitOk(srv(), body(ns), 'ratelimits.limit', key)).toMatchObject({ success: true, remaining: 3 });
    const id = await namespaceIdOf(srv(), ns);
    const scoped = await keyWith(srv(), [`ratelimit.${id}.limit`]);
    expect(await limitOk(srv(), body(ns), 'ratelimit.limit', scoped)).toMatchObject({ success: true, remaining: 2 });
  });

  it('another workspace does not see the namespace: it gets its own of the same name', async () => {
    const ns = uniq();
    await limitOk(srv(), { ...body(ns), limit: 1 });
    expect(await limitOk(srv(), { ...body(ns), limit: 1 })).toMatchObject({ success: false });
    const foreign = await foreignRootKey(srv());
    expect(await limitOk(srv(), { ...body(ns), limit: 1 }, 'ratelimits.limit', foreign)).toMatchObject({ success: true });
    // Nor its id.
    const id = await namespaceIdOf(srv(), ns);
    expectError(await call(srv(), 'ratelimits.getOverride', { namespace: id, identifier: 'x' }, { rootKey: foreign }), 404, 'ratelimit_namespace_not_found');
  });
});
