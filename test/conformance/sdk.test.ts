// The official SDK (@unkey/api 2.x) against a live keyward with only serverURL changed.
// Each row of CALLS is one SDK call: add a row as procedures land. A row's `run` gets the SDK
// client and a shared state (ids made by earlier rows) and returns the SDK's result; any
// SDK-side validation error (ResponseValidationError, SDKValidationError) fails the row.
import { Unkey } from '@unkey/api';
import * as errors from '@unkey/api/models/errors';
import { describe, expect, it } from 'vitest';
import { liveServer } from '../helpers/live.js';
import { createHash, randomBytes } from 'node:crypto';
import { bootstrapWorkspace, call, cli, expectOk, randomRootKey, rootKeyWith } from '../helpers/server.js';

const srv = liveServer();

function sdk(rootKey = srv().rootKey): Unkey {
  // No retries: a 5xx must surface, not be replayed.
  return new Unkey({ serverURL: srv().url, rootKey, retryConfig: { strategy: 'none' } });
}

interface State {
  apiId?: string;
  apiName?: string;
  keyId?: string;
  key?: string;
  roles?: string[];
  rerolled?: { keyId: string; key: string };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;

interface SdkCall {
  name: string;
  run(unkey: Unkey, state: State): Promise<unknown>;
  check(result: unknown, state: State): void;
}

/** The ad-hoc limit's window: the next row must land in the same (epoch-aligned) bucket. */
const ADHOC_MS = 3_600_000;

const need = <T>(v: T | undefined, what: string): T => {
  if (v === undefined) throw new Error(`${what} missing: an earlier row failed`);
  return v;
};

const CALLS: SdkCall[] = [
  {
    name: 'apis.createApi',
    run: (u, s) => u.apis.createApi({ name: (s.apiName = 'sdk-api') }),
    check: (r, s) => {
      const res = r as Awaited<ReturnType<Unkey['apis']['createApi']>>;
      expect(res.meta.requestId).toMatch(/^req_/);
      expect(res.data.apiId).toMatch(/^api_/);
      s.apiId = res.data.apiId;
    },
  },
  {
    name: 'apis.getApi',
    run: (u, s) => u.apis.getApi({ apiId: need(s.apiId, 'apiId') }),
    check: (r, s) => {
      const res = r as Awaited<ReturnType<Unkey['apis']['getApi']>>;
      expect(res.data).toMatchObject({ id: s.apiId, name: s.apiName });
    },
  },
  {
    name: 'apis.listKeys (first page)',
    run: (u, s) => u.apis.listKeys({ apiId: need(s.apiId, 'apiId') }),
    check: (r) => {
      const res = r as Awaited<ReturnType<Unkey['apis']['listKeys']>>;
      expect(res.result.data).toEqual([]);
      expect(res.result.pagination?.hasMore).toBe(false);
    },
  },
  {
    name: 'apis.listKeys (iterating every page)',
    run: async (u, s) => {
      const pages: unknown[] = [];
      for await (const page of await u.apis.listKeys({ apiId: need(s.apiId, 'apiId'), limit: 1 })) {
        pages.push(page.result);
        if (pages.length > 50) throw new Error('the iterator does not stop');
      }
      return pages;
    },
    check: (r) => {
      const pages = r as { data: unknown[]; pagination?: { hasMore: boolean } }[];
      expect(pages).toHaveLength(1);
      expect(pages[0]?.data).toEqual([]);
    },
  },

  // ── keys.* (rows below run against the API created above) ──────────────────────────
  {
    name: 'keys.createKey',
    run: async (u, s) => {
      const roles = [`sdk_role_a_${Date.now()}`, `sdk_role_b_${Date.now()}`];
      for (const name of roles) expectOk(await call(srv(), 'permissions.createRole', { name, permissions: [`${name}.perm`] }));
      s.roles = roles;
      return u.keys.createKey({
        apiId: need(s.apiId, 'apiId'),
        prefix: 'sdk',
        name: 'sdk key',
        externalId: 'sdk_user',
        meta: { plan: 'pro' },
        roles: [roles[0] as string],
        permissions: ['sdk.read'],
        expires: 4102444800000,
        credits: { remaining: 100, refill: { interval: 'monthly', amount: 100, refillDay: 1 } },
        ratelimits: [{ name: 'sdk_limit', limit: 100, duration: 60_000, autoApply: true }],
      });
    },
    check: (r, s) => {
      const res = r as Awaited<ReturnType<Unkey['keys']['createKey']>>;
      expect(res.meta.requestId).toMatch(/^req_/);
      expect(res.data.key).toMatch(/^sdk_/);
      s.keyId = res.data.keyId;
      s.key = res.data.key;
    },
  },
  {
    name: 'keys.verifyKey (VALID with credits, permissions and ratelimits)',
    run: (u, s) => u.keys.verifyKey({ key: need(s.key, 'key'), permissions: 'sdk.read', credits: { cost: 2 }, ratelimits: [{ name: 'sdk_limit', cost: 1 }] }),
    check: (r, s) => {
      const res = r as Awaited<ReturnType<Unkey['keys']['verifyKey']>>;
      expect(res.data).toMatchObject({ valid: true, code: 'VALID', keyId: s.keyId, credits: 98, name: 'sdk key', meta: { plan: 'pro' } });
      expect(res.data.identity?.externalId).toBe('sdk_user');
      expect(res.data.ratelimits?.[0]).toMatchObject({ name: 'sdk_limit', exceeded: false });
    },
  },
  {
    name: 'keys.verifyKey (an ad-hoc limit: limit + duration in the request)',
    run: (u, s) => u.keys.verifyKey({ key: need(s.key, 'key'), credits: { cost: 0 }, ratelimits: [{ name: 'sdk_adhoc', limit: 1, duration: ADHOC_MS }] }),
    check: (r) => {
      const res = r as Awaited<ReturnType<Unkey['keys']['verifyKey']>>;
      expect(res.data).toMatchObject({ valid: true, code: 'VALID', credits: 98 });
      expect(res.data.ratelimits?.find((l) => l.name === 'sdk_adhoc')).toMatchObject({ id: '', limit: 1, duration: ADHOC_MS, remaining: 0, exceeded: false, autoApply: false });
    },
  },
  {
    name: 'keys.verifyKey (the ad-hoc limit is used up: RATE_LIMITED)',
    run: (u, s) => u.keys.verifyKey({ key: need(s.key, 'key'), credits: { cost: 0 }, ratelimits: [{ name: 'sdk_adhoc', limit: 1, duration: ADHOC_MS }] }),
    check: (r) => {
      const res = r as Awaited<ReturnType<Unkey['keys']['verifyKey']>>;
      expect(res.data).toMatchObject({ valid: false, code: 'RATE_LIMITED' });
      expect(res.data.ratelimits?.find((l) => l.name === 'sdk_adhoc')).toMatchObject({ exceeded: true });
    },
  },
  {
    name: 'keys.getKey',
    run: (u, s) => u.keys.getKey({ keyId: need(s.keyId, 'keyId') }),
    check: (r, s) => {
      const res = r as Awaited<ReturnType<Unkey['keys']['getKey']>>;
      expect(res.data).toMatchObject({ keyId: s.keyId, enabled: true, name: 'sdk key', credits: { remaining: 98, refill: { interval: 'monthly', amount: 100, refillDay: 1 } } });
      expect(res.data.roles).toEqual([s.roles?.[0]]);
      expect([...(res.data.permissions ?? [])].sort()).toEqual([`${s.roles?.[0]}.perm`, 'sdk.read'].sort());
      expect(res.data.identity?.externalId).toBe('sdk_user');
      expect(res.data.ratelimits?.[0]).toMatchObject({ name: 'sdk_limit', limit: 100, duration: 60_000, autoApply: true });
    },
  },
  {
    name: 'keys.whoami',
    run: (u, s) => u.keys.whoami({ key: need(s.key, 'key') }),
    check: (r, s) => {
      const res = r as Awaited<ReturnType<Unkey['keys']['whoami']>>;
      expect(res.data.keyId).toBe(s.keyId);
    },
  },
  {
    name: 'keys.updateKey',
    run: (u, s) => u.keys.updateKey({ keyId: need(s.keyId, 'keyId'), name: 'renamed by sdk', meta: null, enabled: true }),
    check: (r) => {
      const res = r as Awaited<ReturnType<Unkey['keys']['updateKey']>>;
      expect(res.meta.requestId).toMatch(/^req_/);
      // The SDK parses data as Unkey's EmptyResponse and drops keyward's extra fields; the
      // new name is checked through verifyKey below.
      expect(typeof res.data).toBe('object');
    },
  },
  {
    name: 'keys.updateCredits (increment)',
    run: (u, s) => u.keys.updateCredits({ keyId: need(s.keyId, 'keyId'), operation: 'increment', value: 2 }),
    check: (r) => {
      const res = r as Awaited<ReturnType<Unkey['keys']['updateCredits']>>;
      expect(res.data).toMatchObject({ remaining: 100, refill: { interval: 'monthly', amount: 100 } });
    },
  },
  {
    name: 'keys.updateCredits (set null → unlimited)',
    run: (u, s) => u.keys.updateCredits({ keyId: need(s.keyId, 'keyId'), operation: 'set', value: null }),
    check: (r) => {
      const res = r as Awaited<ReturnType<Unkey['keys']['updateCredits']>>;
      expect(res.data.remaining).toBeNull();
    },
  },
  {
    name: 'keys.addRoles',
    run: (u, s) => u.keys.addRoles({ keyId: need(s.keyId, 'keyId'), roles: [need(s.roles?.[1], 'role')] }),
    check: (r, s) => {
      const res = r as Awaited<ReturnType<Unkey['keys']['addRoles']>>;
      expect(res.data.map((x) => x.name).sort()).toEqual([...(s.roles ?? [])].sort());
      expect(res.data[0]?.permissions?.[0]?.slug).toMatch(/\.perm$/);
    },
  },
  {
    name: 'keys.removeRoles',
    run: (u, s) => u.keys.removeRoles({ keyId: need(s.keyId, 'keyId'), roles: [need(s.roles?.[0], 'role')] }),
    check: (r, s) => {
      const res = r as Awaited<ReturnType<Unkey['keys']['removeRoles']>>;
      expect(res.data.map((x) => x.name)).toEqual([s.roles?.[1]]);
    },
  },
  {
    name: 'keys.setRoles',
    run: (u, s) => u.keys.setRoles({ keyId: need(s.keyId, 'keyId'), roles: [...need(s.roles, 'roles')] }),
    check: (r) => {
      const res = r as Awaited<ReturnType<Unkey['keys']['setRoles']>>;
      expect(res.data).toHaveLength(2);
    },
  },
  {
    name: 'keys.addPermissions',
    run: (u, s) => u.keys.addPermissions({ keyId: need(s.keyId, 'keyId'), permissions: ['sdk.write', 'sdk.delete'] }),
    check: (r) => {
      const res = r as Awaited<ReturnType<Unkey['keys']['addPermissions']>>;
      expect(res.data.map((p) => p.slug).sort()).toEqual(['sdk.delete', 'sdk.read', 'sdk.write']);
      for (const p of res.data) expect(p.id).toMatch(/^perm_/);
    },
  },
  {
    name: 'keys.removePermissions',
    run: (u, s) => u.keys.removePermissions({ keyId: need(s.keyId, 'keyId'), permissions: ['sdk.delete'] }),
    check: (r) => {
      const res = r as Awaited<ReturnType<Unkey['keys']['removePermissions']>>;
      expect(res.data.map((p) => p.slug).sort()).toEqual(['sdk.read', 'sdk.write']);
    },
  },
  {
    name: 'keys.setPermissions',
    run: (u, s) => u.keys.setPermissions({ keyId: need(s.keyId, 'keyId'), permissions: ['sdk.read'] }),
    check: (r) => {
      const res = r as Awaited<ReturnType<Unkey['keys']['setPermissions']>>;
      expect(res.data.map((p) => p.slug)).toEqual(['sdk.read']);
    },
  },
  {
    name: 'keys.rerollKey',
    run: (u, s) => u.keys.rerollKey({ keyId: need(s.keyId, 'keyId'), expiration: 0 }),
    check: (r, s) => {
      const res = r as Awaited<ReturnType<Unkey['keys']['rerollKey']>>;
      expect(res.data.key).toMatch(/^sdk_/);
      expect(res.data.keyId).not.toBe(s.keyId);
      s.rerolled = { keyId: res.data.keyId, key: res.data.key };
    },
  },
  {
    name: 'keys.verifyKey (the rerolled-away key is EXPIRED)',
    run: (u, s) => u.keys.verifyKey({ key: need(s.key, 'key') }),
    check: (r) => {
      const res = r as Awaited<ReturnType<Unkey['keys']['verifyKey']>>;
      expect(res.data).toMatchObject({ valid: false, code: 'EXPIRED' });
    },
  },
  {
    name: 'keys.verifyKey (the new key is VALID)',
    run: (u, s) => u.keys.verifyKey({ key: need(s.rerolled?.key, 'rerolled key') }),
    check: (r, s) => {
      const res = r as Awaited<ReturnType<Unkey['keys']['verifyKey']>>;
      expect(res.data).toMatchObject({ valid: true, code: 'VALID', keyId: s.rerolled?.keyId, name: 'renamed by sdk' });
    },
  },
  {
    name: 'apis.listKeys (iterating 3 pages of full key records)',
    run: async (u, s) => {
      for (let i = 0; i < 3; i++) await u.keys.createKey({ apiId: need(s.apiId, 'apiId'), externalId: 'sdk_user' });
      const pages: { data: Any[]; pagination?: { hasMore: boolean; cursor?: string } }[] = [];
      for await (const page of await u.apis.listKeys({ apiId: need(s.apiId, 'apiId'), limit: 2 })) {
        pages.push(page.result as Any);
        if (pages.length > 50) throw new Error('the iterator does not stop');
      }
      return pages;
    },
    check: (r, s) => {
      const pages = r as { data: Any[]; pagination?: { hasMore: boolean } }[];
      expect(pages).toHaveLength(3);
      const ids = pages.flatMap((p) => p.data.map((k: { keyId: string }) => k.keyId));
      expect(ids).toHaveLength(5);
      expect(new Set(ids).size).toBe(5);
      expect(ids).toContain(s.keyId);
      expect(ids).toContain(s.rerolled?.keyId);
      expect(pages[0]?.pagination?.hasMore).toBe(true);
      expect(pages[2]?.pagination?.hasMore).toBe(false);
      for (const k of pages.flatMap((p) => p.data)) expect(k).toMatchObject({ start: expect.any(String), enabled: true, createdAt: expect.any(Number) });
    },
  },
  {
    name: 'apis.listKeys (externalId filter)',
    run: (u, s) => u.apis.listKeys({ apiId: need(s.apiId, 'apiId'), externalId: 'sdk_user' }),
    check: (r) => {
      const res = r as Awaited<ReturnType<Unkey['apis']['listKeys']>>;
      expect(res.result.data).toHaveLength(5);
      for (const k of res.result.data) expect(k.identity?.externalId).toBe('sdk_user');
    },
  },
  {
    name: 'keys.deleteKey',
    run: (u, s) => u.keys.deleteKey({ keyId: need(s.rerolled?.keyId, 'rerolled keyId') }),
    check: (r) => {
      const res = r as Awaited<ReturnType<Unkey['keys']['deleteKey']>>;
      expect(res.data).toEqual({});
    },
  },
  {
    name: 'keys.verifyKey (a deleted key is NOT_FOUND)',
    run: (u, s) => u.keys.verifyKey({ key: need(s.rerolled?.key, 'rerolled key') }),
    check: (r) => {
      const res = r as Awaited<ReturnType<Unkey['keys']['verifyKey']>>;
      expect(res.data).toEqual({ valid: false, code: 'NOT_FOUND' });
    },
  },
  {
    name: 'apis.deleteApi',
    run: (u, s) => u.apis.deleteApi({ apiId: need(s.apiId, 'apiId') }),
    check: (r) => {
      const res = r as Awaited<ReturnType<Unkey['apis']['deleteApi']>>;
      expect(res.meta.requestId).toMatch(/^req_/);
      expect(res.data).toEqual({});
    },
  },
];

describe('@unkey/api against keyward', () => {
  const state: State = {};
  for (const row of CALLS) {
    it(`${row.name} works through the SDK`, async () => {
      let result: unknown;
      try {
        result = await row.run(sdk(), state);
      } catch (err) {
        const e = err as Error & { body?: string; statusCode?: number; cause?: unknown };
        throw new Error(`${row.name}: ${e.name}: ${e.message}${e.body ? `\nbody: ${e.body.slice(0, 500)}` : ''}${e.cause ? `\ncause: ${String(e.cause)}` : ''}`);
      }
      row.check(result, state);
    });
  }

  it('keys.migrateKeys (a migration made with the CLI) and keys.verifyKey {migrationId} work through the SDK', async () => {
    const unkey = sdk();
    // The CLI works on the server's store (in cluster mode, through the cluster's PostgreSQL).
    const pgUrl = srv().env.KEYWARD_POSTGRES_URL;
    const env: Record<string, string> = pgUrl === undefined ? {} : { KEYWARD_POSTGRES_URL: pgUrl };
    const ws = await bootstrapWorkspace(srv().dataDir, env);
    const migration = async (algorithm: string): Promise<string> => {
      const res = await cli(['migrations', 'create', '--workspace', ws, '--algorithm', algorithm], srv().dataDir, env);
      expect(res.code, res.stderr).toBe(0);
      expect(res.json).toEqual({ migrationId: expect.any(String), workspaceId: ws, algorithm });
      return res.json.migrationId as string;
    };
    const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');
    const { data: api } = await unkey.apis.createApi({ name: 'sdk-migrate' });

    // sha256: VALID at once, with migrationId and without.
    const sha = await migration('sha256');
    const key = `legacy_${randomBytes(16).toString('hex')}`;
    const migrated = await unkey.keys.migrateKeys({ migrationId: sha, apiId: api.apiId, keys: [{ hash: sha256(key), name: 'sdk-migrated', externalId: 'sdk_migrated_user', permissions: ['sdk.migrated'], credits: { remaining: 10 } }] });
    expect(migrated.meta.requestId).toMatch(/^req_/);
    expect(migrated.data.failed).toEqual([]);
    expect(migrated.data.migrated).toEqual([{ hash: sha256(key), keyId: expect.stringMatching(/^key_/) }]);
    const keyId = migrated.data.migrated[0]?.keyId;
    const withId = await unkey.keys.verifyKey({ key, migrationId: sha, permissions: 'sdk.migrated' });
    expect(withId.data).toMatchObject({ valid: true, code: 'VALID', keyId, name: 'sdk-migrated', credits: 9, identity: { externalId: 'sdk_migrated_user' } });
    expect((await unkey.keys.verifyKey({ key })).data).toMatchObject({ valid: true, code: 'VALID', keyId, credits: 8 });
    const again = await unkey.keys.migrateKeys({ migrationId: sha, apiId: api.apiId, keys: [{ hash: sha256(key) }] });
    expect(again.data).toEqual({ migrated: [], failed: [sha256(key)] });

    // seamapi prefixed-api-key: found with migrationId on first use, then without.
    const seam = await migration('github.com/seamapi/prefixed-api-key');
    const longToken = randomBytes(12).toString('hex');
    const seamKey = `sdkco_${randomBytes(4).toString('hex')}_${longToken}`;
    const seamRes = await unkey.keys.migrateKeys({ migrationId: seam, apiId: api.apiId, keys: [{ hash: sha256(longToken) }] });
    const seamKeyId = seamRes.data.migrated[0]?.keyId;
    expect(seamKeyId).toMatch(/^key_/);
    expect((await unkey.keys.verifyKey({ key: seamKey })).data).toMatchObject({ valid: false, code: 'NOT_FOUND' });
    expect((await unkey.keys.verifyKey({ key: seamKey, migrationId: seam })).data).toMatchObject({ valid: true, code: 'VALID', keyId: seamKeyId });
    expect((await unkey.keys.verifyKey({ key: seamKey })).data).toMatchObject({ valid: true, code: 'VALID', keyId: seamKeyId });
    expect((await unkey.keys.getKey({ keyId: need(seamKeyId, 'seam keyId') })).data.start).toBe(seamKey.slice(0, 'sdkco_'.length + 4));

    // An unknown migration surfaces as the typed NotFoundErrorResponse.
    const err = await unkey.keys.migrateKeys({ migrationId: 'mig_doesnotexist', apiId: api.apiId, keys: [{ hash: sha256('x') }] }).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(errors.NotFoundErrorResponse);
    expect((err as errors.NotFoundErrorResponse).data$.error.type).toMatch(/\/migration_not_found$/);
  });

  it('a deleted API surfaces as the typed NotFoundErrorResponse', async () => {
    const unkey = sdk();
    const { data } = await unkey.apis.createApi({ name: 'sdk-gone' });
    await unkey.apis.deleteApi({ apiId: data.apiId });
    const err = await unkey.apis.getApi({ apiId: data.apiId }).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(errors.NotFoundErrorResponse);
    expect((err as errors.NotFoundErrorResponse).data$.error.status).toBe(404);
  });

  it('a bad root key surfaces as the typed UnauthorizedErrorResponse (an UnkeyError)', async () => {
    const err = await sdk(randomRootKey()).apis.createApi({ name: 'never' }).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(errors.UnauthorizedErrorResponse);
    expect(err).toBeInstanceOf(errors.UnkeyError);
    const typed = err as errors.UnauthorizedErrorResponse;
    expect(typed.statusCode).toBe(401);
    expect(typed.data$.meta.requestId).toMatch(/^req_/);
    expect(typed.data$.error.status).toBe(401);
  });

  it('a schema violation surfaces as the typed BadRequestErrorResponse with errors[]', async () => {
    // The SDK does not check lengths; the server does.
    const err = await sdk().apis.createApi({ name: 'ab' }).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(errors.BadRequestErrorResponse);
    const typed = err as errors.BadRequestErrorResponse;
    expect(typed.data$.error.errors.length).toBeGreaterThan(0);
  });

  it('a deleted key surfaces as the typed NotFoundErrorResponse from keys.getKey', async () => {
    const unkey = sdk();
    const { data: api } = await unkey.apis.createApi({ name: 'sdk-key-gone' });
    const { data } = await unkey.keys.createKey({ apiId: api.apiId });
    await unkey.keys.deleteKey({ keyId: data.keyId });
    const err = await unkey.keys.getKey({ keyId: data.keyId }).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(errors.NotFoundErrorResponse);
  });

  it('a missing role surfaces as the typed NotFoundErrorResponse from keys.addRoles', async () => {
    const unkey = sdk();
    const { data: api } = await unkey.apis.createApi({ name: 'sdk-role-gone' });
    const { data } = await unkey.keys.createKey({ apiId: api.apiId });
    const err = await unkey.keys.addRoles({ keyId: data.keyId, roles: ['no_such_role_sdk'] }).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(errors.NotFoundErrorResponse);
  });

  it('a key procedure without permission surfaces as the typed ForbiddenErrorResponse', async () => {
    const unkey = sdk();
    const { data: api } = await unkey.apis.createApi({ name: 'sdk-key-forbidden' });
    const { data } = await unkey.keys.createKey({ apiId: api.apiId });
    const { key } = await rootKeyWith(srv(), ['apis.*.read_api']);
    const err = await sdk(key).keys.getKey({ keyId: data.keyId }).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(errors.ForbiddenErrorResponse);
  });

  it('a missing permission surfaces as the typed ForbiddenErrorResponse', async () => {
    const { key } = await rootKeyWith(srv(), ['apis.*.read_api']);
    const err = await sdk(key).apis.createApi({ name: 'forbidden' }).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(errors.ForbiddenErrorResponse);
    expect((err as errors.ForbiddenErrorResponse).data$.error.detail).toContain('apis.*.create_api');
  });
});
