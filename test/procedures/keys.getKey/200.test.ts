// keys.getKey 200: the full record (credits/refill, identity, ratelimits, roles, permission
// union) and, on a server with KEYWARD_VAULT_KEY, decrypt:true returning the plaintext.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, expectOk } from '../../helpers/server.js';
import { getKey, newKey, newRole, rootKeys, uniq } from '../../helpers/keys.js';

const srv = inProcessServer({ env: { KEYWARD_VAULT_KEY: randomBytes(32).toString('base64') } });

describe('keys.getKey 200', () => {
  it('a minimal key: keyId, start, enabled, createdAt only', async () => {
    const before = Date.now();
    const { keyId, key } = await newKey(srv(), { prefix: 'min' });
    const got = await getKey(srv(), keyId);
    expect(Object.keys(got).sort()).toEqual(['createdAt', 'enabled', 'keyId', 'start']);
    expect(got).toMatchObject({ keyId, start: key.slice(0, 'min_'.length + 4), enabled: true });
    expect(got.createdAt).toBeGreaterThanOrEqual(before - 1000);
    expect(got.createdAt).toBeLessThanOrEqual(Date.now() + 1000);
  });

  it('the full record, permissions = direct ∪ role permissions without duplicates', async () => {
    const roleA = await newRole(srv(), ['docs.read', 'docs.write']);
    const roleB = await newRole(srv(), ['docs.write', 'billing.read']);
    const externalId = uniq('owner');
    const { keyId } = await newKey(srv(), {
      name: 'everything',
      externalId,
      meta: { tier: 'gold' },
      expires: 4000000000000,
      credits: { remaining: 9, refill: { interval: 'daily', amount: 9 } },
      ratelimits: [{ name: 'burst', limit: 3, duration: 1000, autoApply: true }],
      roles: [roleA, roleB],
      permissions: ['docs.read', 'own.perm'],
    });
    const got = await getKey(srv(), keyId);
    expect(got).toMatchObject({
      keyId,
      enabled: true,
      name: 'everything',
      externalId,
      meta: { tier: 'gold' },
      expires: 4000000000000,
      credits: { remaining: 9, refill: { interval: 'daily', amount: 9 } },
      identity: { id: expect.stringMatching(/^id_/), externalId },
      ratelimits: [{ id: expect.stringMatching(/^rl_/), name: 'burst', limit: 3, duration: 1000, autoApply: true }],
    });
    expect([...got.roles].sort()).toEqual([roleA, roleB].sort());
    expect([...got.permissions].sort()).toEqual(['billing.read', 'docs.read', 'docs.write', 'own.perm']);
    expect(new Set(got.permissions).size).toBe(got.permissions.length);
    expect(got).not.toHaveProperty('plaintext');
  });

  it('monthly refill shows refillDay', async () => {
    const { keyId } = await newKey(srv(), { credits: { remaining: 1, refill: { interval: 'monthly', amount: 50, refillDay: 31 } } });
    expect((await getKey(srv(), keyId)).credits).toEqual({ remaining: 1, refill: { interval: 'monthly', amount: 50, refillDay: 31 } });
  });

  it('credits reflect verifications', async () => {
    const { keyId, key } = await newKey(srv(), { credits: { remaining: 3 } });
    expectOk(await call(srv(), 'keys.verifyKey', { key, credits: { cost: 2 } }));
    expect((await getKey(srv(), keyId)).credits).toEqual({ remaining: 1 });
  });

  it('identity meta and identity rate limits appear under identity', async () => {
    const externalId = uniq('ident');
    expectOk(await call(srv(), 'identities.createIdentity', { externalId, meta: { org: 'acme' }, ratelimits: [{ name: 'org-limit', limit: 100, duration: 60_000 }] }));
    const { keyId } = await newKey(srv(), { externalId });
    const got = await getKey(srv(), keyId);
    expect(got.identity).toMatchObject({ externalId, meta: { org: 'acme' }, ratelimits: [expect.objectContaining({ name: 'org-limit', limit: 100, duration: 60_000 })] });
    expect(got).not.toHaveProperty('ratelimits');
  });

  it('recoverable key: decrypt:true returns plaintext equal to the created key', async () => {
    const { keyId, key } = await newKey(srv(), { recoverable: true, prefix: 'rec', byteLength: 40 });
    const got = await getKey(srv(), keyId, { decrypt: true });
    expect(got.plaintext).toBe(key);
    expect(await getKey(srv(), keyId, { decrypt: false })).not.toHaveProperty('plaintext');
  });

  it('non-recoverable key: decrypt:true just omits plaintext', async () => {
    const { keyId } = await newKey(srv());
    expect(await getKey(srv(), keyId, { decrypt: true })).not.toHaveProperty('plaintext');
  });

  it('a rerolled recoverable key is recoverable too: decrypt returns the new plaintext', async () => {
    const { keyId } = await newKey(srv(), { recoverable: true });
    const fresh = expectOk(await call(srv(), 'keys.rerollKey', { keyId, expiration: 0 })) as { keyId: string; key: string };
    expect((await getKey(srv(), fresh.keyId, { decrypt: true })).plaintext).toBe(fresh.key);
  });

  it('per-API read_key (and decrypt_key) grants are enough', async () => {
    const { keyId, key, apiId } = await newKey(srv(), { recoverable: true });
    const { keys } = await rootKeys(srv(), [[`apis.${apiId}.read_key`], [`api.${apiId}.read_key`, `api.${apiId}.decrypt_key`]]);
    expect(expectOk(await call(srv(), 'keys.getKey', { keyId }, { rootKey: keys[0] })).keyId).toBe(keyId);
    expect(expectOk(await call(srv(), 'keys.getKey', { keyId, decrypt: true }, { rootKey: keys[1] })).plaintext).toBe(key);
  });
});
