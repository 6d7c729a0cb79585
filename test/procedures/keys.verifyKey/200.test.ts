// keys.verifyKey: refusals are 200 successes carrying valid:false and a code.
import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, createApi, expectOk, foreignRootKey, rootKeyWith } from '../../helpers/server.js';

const srv = inProcessServer();

async function createKey(body: Record<string, unknown>): Promise<{ keyId: string; key: string; apiId: string }> {
  const apiId = (body.apiId as string | undefined) ?? (await createApi(srv()));
  const data = expectOk(await call(srv(), 'keys.createKey', { ...body, apiId })) as { keyId: string; key: string };
  return { ...data, apiId };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function verify(body: Record<string, unknown>, rootKey?: string): Promise<any> {
  return expectOk(await call(srv(), 'keys.verifyKey', body, rootKey === undefined ? {} : { rootKey }));
}

describe('keys.verifyKey 200', () => {
  it('a key created with enabled omitted is VALID', async () => {
    const { key, keyId } = await createKey({});
    expect(await verify({ key })).toEqual({ valid: true, code: 'VALID', keyId, enabled: true });
  });

  it('an unknown key → 200 NOT_FOUND with only valid and code', async () => {
    const res = await call(srv(), 'keys.verifyKey', { key: 'unknown_1234567890abcdef' });
    expect(res.status).toBe(200);
    expect(res.json.data).toEqual({ valid: false, code: 'NOT_FOUND' });
  });

  it('an unknown key with a bad permission query is still NOT_FOUND', async () => {
    expect(await verify({ key: 'unknown_1234567890abcdef', permissions: 'a AND (' })).toEqual({ valid: false, code: 'NOT_FOUND' });
  });

  it('enabled=false → DISABLED', async () => {
    const { key, keyId } = await createKey({ enabled: false });
    expect(await verify({ key })).toEqual({ valid: false, code: 'DISABLED', keyId, enabled: false });
  });

  it('an expired key → EXPIRED', async () => {
    const { key } = await createKey({ expires: Date.now() - 1_000 });
    expect(await verify({ key })).toMatchObject({ valid: false, code: 'EXPIRED' });
  });

  it('credits: default cost 1, given cost, cost 0, cost > remaining, remaining 0', async () => {
    const { key, keyId } = await createKey({ credits: { remaining: 5 } });
    expect(await verify({ key })).toMatchObject({ valid: true, code: 'VALID', credits: 4 });
    expect(await verify({ key, credits: { cost: 3 } })).toMatchObject({ code: 'VALID', credits: 1 });
    expect(await verify({ key, credits: { cost: 0 } })).toMatchObject({ code: 'VALID', credits: 1 });
    expect(await verify({ key, credits: { cost: 2 } })).toMatchObject({ valid: false, code: 'USAGE_EXCEEDED', credits: 1 });
    expect(await verify({ key })).toMatchObject({ code: 'VALID', credits: 0 });
    expect(await verify({ key, credits: { cost: 0 } })).toMatchObject({ valid: false, code: 'USAGE_EXCEEDED', credits: 0 });
    const got = expectOk(await call(srv(), 'keys.getKey', { keyId }));
    expect(got.credits.remaining).toBe(0);
    expectOk(await call(srv(), 'keys.updateCredits', { keyId, operation: 'increment', value: 2 }));
    expect(await verify({ key })).toMatchObject({ code: 'VALID', credits: 1 });
    expectOk(await call(srv(), 'keys.updateKey', { keyId, credits: null }));
    const unlimited = await verify({ key, credits: { cost: 100 } });
    expect(unlimited.code).toBe('VALID');
    expect(unlimited).not.toHaveProperty('credits');
  });

  it('permission queries, roles, identity and meta in the result', async () => {
    const role = `role_${Date.now()}`;
    expectOk(await call(srv(), 'permissions.createRole', { name: role, permissions: ['docs.write'] }));
    const { key } = await createKey({ permissions: ['docs.*'], roles: [role], externalId: 'http_user', meta: { plan: 'pro' }, name: 'k' });
    const d = await verify({ key, permissions: 'docs.read AND (docs.write or nope)' });
    expect(d).toMatchObject({ valid: true, code: 'VALID', name: 'k', meta: { plan: 'pro' }, roles: [role], identity: { externalId: 'http_user' } });
    expect([...d.permissions].sort()).toEqual(['docs.*', 'docs.write']);
    expect(await verify({ key, permissions: 'admin' })).toMatchObject({ valid: false, code: 'INSUFFICIENT_PERMISSIONS' });
  });

  it('only a last segment * is a wildcard: docs.* covers docs.read.own, not docs; doc* and a bare * match only themselves', async () => {
    const { key } = await createKey({ permissions: ['docs.*', 'bil*', '*'] });
    const code = async (permissions: string): Promise<string> => (await verify({ key, permissions })).code;
    expect(await code('docs.read.own')).toBe('VALID');
    expect(await code('docs')).toBe('INSUFFICIENT_PERMISSIONS');
    expect(await code('billing.read')).toBe('INSUFFICIENT_PERMISSIONS');
    expect(await code('anything')).toBe('INSUFFICIENT_PERMISSIONS');
    expect(await code('bil* AND *')).toBe('VALID');
  });

  it('rate limits: autoApply, named cost, RATE_LIMITED with exceeded:true', async () => {
    const { key } = await createKey({ credits: { remaining: 100 }, ratelimits: [{ name: 'base', limit: 3, duration: 3_600_000, autoApply: true }, { name: 'manual', limit: 1, duration: 3_600_000 }] });
    const first = await verify({ key });
    expect(first.ratelimits).toEqual([expect.objectContaining({ name: 'base', limit: 3, duration: 3_600_000, remaining: 2, exceeded: false, autoApply: true })]);
    expect(typeof first.ratelimits[0].reset).toBe('number');
    const named = await verify({ key, ratelimits: [{ name: 'base', cost: 2 }, { name: 'manual' }] });
    expect(named.code).toBe('VALID');
    expect(named.ratelimits.find((r: { name: string }) => r.name === 'base').remaining).toBe(0);
    expect(named.ratelimits.find((r: { name: string }) => r.name === 'manual').remaining).toBe(0);
    const refused = await verify({ key });
    expect(refused).toMatchObject({ valid: false, code: 'RATE_LIMITED', credits: 98 });
    expect(refused.ratelimits).toEqual([expect.objectContaining({ name: 'base', exceeded: true, remaining: 0 })]);
  });

  it('tags are accepted for SDK compatibility', async () => {
    const { key } = await createKey({});
    expect((await verify({ key, tags: ['path=/v1'] })).code).toBe('VALID');
  });

  it('a root key with apis.<apiId>.verify_key verifies that API only; other APIs → NOT_FOUND', async () => {
    const mine = await createKey({});
    const other = await createKey({});
    const { key: rk } = await rootKeyWith(srv(), [`apis.${mine.apiId}.verify_key`]);
    expect((await verify({ key: mine.key }, rk)).code).toBe('VALID');
    expect(await verify({ key: other.key }, rk)).toEqual({ valid: false, code: 'NOT_FOUND' });
    const { key: alias } = await rootKeyWith(srv(), [`api.${mine.apiId}.verify_key`]);
    expect((await verify({ key: mine.key }, alias)).code).toBe('VALID');
  });

  it("a key of another workspace → NOT_FOUND", async () => {
    const { key } = await createKey({});
    const foreign = await foreignRootKey(srv());
    expect(await verify({ key }, foreign)).toEqual({ valid: false, code: 'NOT_FOUND' });
  });

  it('deleteKey and deleteApi make keys NOT_FOUND at once', async () => {
    const a = await createKey({});
    expectOk(await call(srv(), 'keys.deleteKey', { keyId: a.keyId }));
    expect(await verify({ key: a.key })).toEqual({ valid: false, code: 'NOT_FOUND' });
    const b = await createKey({});
    expectOk(await call(srv(), 'apis.deleteApi', { apiId: b.apiId }));
    expect(await verify({ key: b.key })).toEqual({ valid: false, code: 'NOT_FOUND' });
  });
});
