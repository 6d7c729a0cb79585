// keys.migrateKeys 200: the {migrated, failed} shape, every field of a key stored (read back
// with keys.getKey and keys.verifyKey), each algorithm's keys verifying (seam keys moved
// under keyward's hash on their first VALID verification with migrationId), duplicates in
// `failed`, and identities / permissions / roles found or created, never duplicated.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, createApi, expectError, expectOk } from '../../helpers/server.js';
import { base58Decode, getKey, newKey, newRole, uniq, verify } from '../../helpers/keys.js';
import { legacyKey, newMigration, seamKey, sha256Base64, sha256Hex } from '../../helpers/migrations.js';
import { native } from '../../../src/engine/native.js';
import { direct } from '../../../src/store/db.js';
import { getKeyRecord, saveKey } from '../../../src/store/keys.js';

const srv = inProcessServer();

interface Migrated {
  migrated: { hash: string; keyId: string }[];
  failed: string[];
}

async function migrate(migrationId: string, apiId: string, keys: Record<string, unknown>[]): Promise<Migrated> {
  return expectOk(await call(srv(), 'keys.migrateKeys', { migrationId, apiId, keys })) as Migrated;
}

/** Migrates one key; its keyId. */
async function migrateOne(migrationId: string, apiId: string, key: Record<string, unknown>): Promise<string> {
  const res = await migrate(migrationId, apiId, [key]);
  expect(res).toEqual({ migrated: [{ hash: key.hash, keyId: expect.stringMatching(/^key_/) }], failed: [] });
  return (res.migrated[0] as { keyId: string }).keyId;
}

async function listKeyIds(apiId: string): Promise<string[]> {
  return (expectOk(await call(srv(), 'apis.listKeys', { apiId, limit: 100 })) as { keyId: string }[]).map((k) => k.keyId).sort();
}

async function listed(procedure: string, search: string): Promise<{ id: string; [k: string]: unknown }[]> {
  const res = await call(srv(), procedure, { search, limit: 100 });
  const data = expectOk(res) as { id: string }[];
  expect(res.json.pagination.hasMore).toBe(false);
  return data;
}

describe('keys.migrateKeys 200', () => {
  it('returns exactly {migrated:[{hash, keyId}], failed:[]}, in request order, one key per hash', async () => {
    const apiId = await createApi(srv());
    const mig = newMigration(srv(), 'sha256');
    const hashes = [legacyKey(), legacyKey(), legacyKey()].map(sha256Hex);
    const res = expectOk(await call(srv(), 'keys.migrateKeys', { migrationId: mig, apiId, keys: hashes.map((hash) => ({ hash })) }));
    expect(Object.keys(res).sort()).toEqual(['failed', 'migrated']);
    expect(res.failed).toEqual([]);
    expect(res.migrated.map((m: { hash: string }) => m.hash)).toEqual(hashes);
    for (const m of res.migrated) expect(Object.keys(m).sort()).toEqual(['hash', 'keyId']);
    const ids = res.migrated.map((m: { keyId: string }) => m.keyId) as string[];
    for (const id of ids) expect(id).toMatch(/^key_[1-9A-HJ-NP-Za-km-z]+$/);
    expect(new Set(ids).size).toBe(3);
    expect(await listKeyIds(apiId)).toEqual([...ids].sort());
  });

  it('stores every field: getKey shows name, meta, expires, credits+refill, identity, ratelimits, roles, permissions', async () => {
    const apiId = await createApi(srv());
    const mig = newMigration(srv(), 'sha256');
    const stem = uniq('all');
    const key = legacyKey();
    const before = Date.now();
    const keyId = await migrateOne(mig, apiId, {
      hash: sha256Hex(key),
      name: 'migrated key',
      externalId: `${stem}.user`,
      meta: { plan: 'pro', nested: { n: 1 } },
      expires: 4102444800000,
      credits: { remaining: 42, refill: { interval: 'monthly', amount: 100, refillDay: 15 } },
      ratelimits: [{ name: 'per-sec', limit: 10, duration: 1000, autoApply: true }, { name: 'manual', limit: 5, duration: 60_000 }],
      roles: [`${stem}_role`],
      permissions: [`${stem}.read`, `${stem}.write`],
      enabled: true,
    });
    const got = await getKey(srv(), keyId);
    expect(got).toMatchObject({
      keyId,
      start: '',
      enabled: true,
      name: 'migrated key',
      meta: { plan: 'pro', nested: { n: 1 } },
      expires: 4102444800000,
      credits: { remaining: 42, refill: { interval: 'monthly', amount: 100, refillDay: 15 } },
      identity: { externalId: `${stem}.user` },
      roles: [`${stem}_role`],
    });
    expect(got.identity.id).toMatch(/^id_/);
    expect(got.createdAt).toBeGreaterThanOrEqual(before - 1000);
    expect([...got.permissions].sort()).toEqual([`${stem}.read`, `${stem}.write`]);
    expect(got.ratelimits).toEqual([
      { id: expect.stringMatching(/^rl_/), name: 'per-sec', limit: 10, duration: 1000, autoApply: true },
      { id: expect.stringMatching(/^rl_/), name: 'manual', limit: 5, duration: 60_000, autoApply: false },
    ]);

    const v = await verify(srv(), key);
    expect(v).toMatchObject({
      valid: true,
      code: 'VALID',
      keyId,
      name: 'migrated key',
      meta: { plan: 'pro', nested: { n: 1 } },
      expires: 4102444800000,
      credits: 41,
      enabled: true,
      roles: [`${stem}_role`],
      identity: { id: got.identity.id, externalId: `${stem}.user` },
    });
    expect([...v.permissions].sort()).toEqual([`${stem}.read`, `${stem}.write`]);
    expect(v.ratelimits).toEqual([expect.objectContaining({ name: 'per-sec', limit: 10, duration: 1000, remaining: 9, exceeded: false, autoApply: true })]);
  });

  it('defaults: enabled true, no credits, no identity, no roles, permissions or ratelimits', async () => {
    const apiId = await createApi(srv());
    const mig = newMigration(srv(), 'sha256');
    const key = legacyKey();
    const keyId = await migrateOne(mig, apiId, { hash: sha256Hex(key) });
    const got = await getKey(srv(), keyId);
    expect(got).toMatchObject({ keyId, start: '', enabled: true });
    for (const field of ['name', 'meta', 'expires', 'credits', 'identity']) expect(got).not.toHaveProperty(field);
    expect(got.roles ?? []).toEqual([]);
    expect(got.permissions ?? []).toEqual([]);
    expect(got.ratelimits ?? []).toEqual([]);
    expect(await verify(srv(), key)).toMatchObject({ valid: true, code: 'VALID', keyId, enabled: true });
  });

  it('permissions (direct and through a role) answer permission queries', async () => {
    const apiId = await createApi(srv());
    const mig = newMigration(srv(), 'sha256');
    const stem = uniq('pq');
    const role = await newRole(srv(), [`${stem}.billing.read`]);
    const key = legacyKey();
    await migrateOne(mig, apiId, { hash: sha256Hex(key), roles: [role], permissions: [`${stem}.docs.read`] });
    const code = async (permissions: string): Promise<string> => (await verify(srv(), key, { permissions })).code as string;
    expect(await code(`${stem}.docs.read`)).toBe('VALID');
    expect(await code(`${stem}.billing.read`)).toBe('VALID');
    expect(await code(`${stem}.docs.read AND ${stem}.billing.read`)).toBe('VALID');
    expect(await code(`${stem}.docs.write`)).toBe('INSUFFICIENT_PERMISSIONS');
    expect(await code(`${stem}.docs.read AND ${stem}.docs.write`)).toBe('INSUFFICIENT_PERMISSIONS');
    expect(await code(`${stem}.docs.write OR ${stem}.billing.read`)).toBe('VALID');
  });

  it('expires in the past → EXPIRED; enabled false → DISABLED', async () => {
    const apiId = await createApi(srv());
    const mig = newMigration(srv(), 'sha256');
    const expired = legacyKey();
    const disabled = legacyKey();
    const res = await migrate(mig, apiId, [{ hash: sha256Hex(expired), expires: Date.now() - 60_000 }, { hash: sha256Hex(disabled), enabled: false }]);
    expect(res.failed).toEqual([]);
    expect(await verify(srv(), expired)).toMatchObject({ valid: false, code: 'EXPIRED', keyId: res.migrated[0]?.keyId });
    expect(await verify(srv(), disabled)).toMatchObject({ valid: false, code: 'DISABLED', keyId: res.migrated[1]?.keyId, enabled: false });
    expect((await getKey(srv(), res.migrated[1]?.keyId as string)).enabled).toBe(false);
  });

  it('credits: the balance is spent, then USAGE_EXCEEDED; a daily refill is kept', async () => {
    const apiId = await createApi(srv());
    const mig = newMigration(srv(), 'sha256');
    const key = legacyKey();
    const keyId = await migrateOne(mig, apiId, { hash: sha256Hex(key), credits: { remaining: 2, refill: { interval: 'daily', amount: 7 } } });
    expect((await getKey(srv(), keyId)).credits).toEqual({ remaining: 2, refill: { interval: 'daily', amount: 7 } });
    expect(await verify(srv(), key)).toMatchObject({ valid: true, code: 'VALID', credits: 1 });
    expect(await verify(srv(), key)).toMatchObject({ valid: true, code: 'VALID', credits: 0 });
    expect(await verify(srv(), key)).toMatchObject({ valid: false, code: 'USAGE_EXCEEDED', credits: 0 });
  });

  it('credits.remaining null = unlimited (no credits on the record)', async () => {
    const apiId = await createApi(srv());
    const mig = newMigration(srv(), 'sha256');
    const keyId = await migrateOne(mig, apiId, { hash: sha256Hex(legacyKey()), credits: { remaining: null } });
    expect(await getKey(srv(), keyId)).not.toHaveProperty('credits');
  });

  it('an autoApply rate limit applies at verification: RATE_LIMITED once used up', async () => {
    const apiId = await createApi(srv());
    const mig = newMigration(srv(), 'sha256');
    const key = legacyKey();
    await migrateOne(mig, apiId, { hash: sha256Hex(key), ratelimits: [{ name: 'hourly', limit: 1, duration: 3_600_000, autoApply: true }] });
    expect(await verify(srv(), key)).toMatchObject({ valid: true, code: 'VALID', ratelimits: [{ name: 'hourly', remaining: 0, exceeded: false }] });
    expect(await verify(srv(), key)).toMatchObject({ valid: false, code: 'RATE_LIMITED', ratelimits: [{ name: 'hourly', exceeded: true }] });
  });

  it('accepts 1000 keys in one call; each verifies', async () => {
    const apiId = await createApi(srv());
    const mig = newMigration(srv(), 'sha256');
    const keys = Array.from({ length: 1000 }, () => legacyKey());
    const res = await migrate(mig, apiId, keys.map((k) => ({ hash: sha256Hex(k) })));
    expect(res.failed).toEqual([]);
    expect(res.migrated.map((m) => m.hash)).toEqual(keys.map(sha256Hex));
    expect(new Set(res.migrated.map((m) => m.keyId)).size).toBe(1000);
    for (const i of [0, 499, 999]) expect(await verify(srv(), keys[i] as string)).toMatchObject({ valid: true, code: 'VALID', keyId: res.migrated[i]?.keyId });
  });
});

describe('keys.migrateKeys 200: each algorithm verifies', () => {
  it.each([
    ['lower-case', (h: string) => h.toLowerCase()],
    ['upper-case', (h: string) => h.toUpperCase()],
  ])('sha256 hex (%s): VALID at once, without and with migrationId', async (_why, casing) => {
    const apiId = await createApi(srv());
    const mig = newMigration(srv(), 'sha256');
    const key = legacyKey();
    const keyId = await migrateOne(mig, apiId, { hash: casing(sha256Hex(key)) });
    expect(await verify(srv(), key)).toMatchObject({ valid: true, code: 'VALID', keyId });
    expect(await verify(srv(), key, { migrationId: mig })).toMatchObject({ valid: true, code: 'VALID', keyId });
    expect(await verify(srv(), key)).toMatchObject({ valid: true, code: 'VALID', keyId });
    expect(await verify(srv(), `${key}x`, { migrationId: mig })).toEqual({ valid: false, code: 'NOT_FOUND' });
  });

  it('sha256 hex: the same digest in the other case is the same hash → failed', async () => {
    const apiId = await createApi(srv());
    const mig = newMigration(srv(), 'sha256');
    const hash = sha256Hex(legacyKey());
    const keyId = await migrateOne(mig, apiId, { hash: hash.toUpperCase() });
    expect(await migrate(mig, apiId, [{ hash }])).toEqual({ migrated: [], failed: [hash] });
    expect(await listKeyIds(apiId)).toEqual([keyId]);
  });

  it('sha256-base64: VALID at once, with migrationId first, then without', async () => {
    const apiId = await createApi(srv());
    const mig = newMigration(srv(), 'sha256-base64');
    const key = legacyKey();
    const hash = sha256Base64(key);
    expect(hash).toHaveLength(44);
    const keyId = await migrateOne(mig, apiId, { hash });
    expect(await verify(srv(), key, { migrationId: mig })).toMatchObject({ valid: true, code: 'VALID', keyId });
    expect(await verify(srv(), key)).toMatchObject({ valid: true, code: 'VALID', keyId });
    expect(await verify(srv(), `${key}x`, { migrationId: mig })).toEqual({ valid: false, code: 'NOT_FOUND' });
  });

  it('seamapi prefixed-api-key: NOT_FOUND without migrationId until its first verification with it; VALID from then on', async () => {
    const apiId = await createApi(srv());
    const mig = newMigration(srv(), 'github.com/seamapi/prefixed-api-key');
    const seam = seamKey();
    const keyId = await migrateOne(mig, apiId, { hash: seam.hash, name: 'seam' });
    expect((await getKey(srv(), keyId)).start).toBe('');
    expect(await verify(srv(), seam.key)).toEqual({ valid: false, code: 'NOT_FOUND' });
    expect(await verify(srv(), seam.key)).toEqual({ valid: false, code: 'NOT_FOUND' });
    expect(await verify(srv(), seam.key, { migrationId: mig })).toMatchObject({ valid: true, code: 'VALID', keyId, name: 'seam' });
    expect((await getKey(srv(), keyId)).start).toBe(seam.start);
    expect(await verify(srv(), seam.key)).toMatchObject({ valid: true, code: 'VALID', keyId });
    expect(await verify(srv(), seam.key, { migrationId: mig })).toMatchObject({ valid: true, code: 'VALID', keyId });
    expect(await listKeyIds(apiId)).toEqual([keyId]);
  });

  it('seamapi: the example key of the brief (start = prefix_ + 4 characters)', async () => {
    const apiId = await createApi(srv());
    const mig = newMigration(srv(), 'github.com/seamapi/prefixed-api-key');
    const key = 'mycompany_BRTRKFsL_51FwqftsmMDHHbJAMEXXHCgG';
    const keyId = await migrateOne(mig, apiId, { hash: sha256Hex('51FwqftsmMDHHbJAMEXXHCgG') });
    expect(await verify(srv(), key, { migrationId: mig })).toMatchObject({ valid: true, code: 'VALID', keyId });
    expect((await getKey(srv(), keyId)).start).toBe('mycompany_BRTR');
  });

  it('seamapi: a wrong key with migrationId is NOT_FOUND and moves nothing', async () => {
    const apiId = await createApi(srv());
    const mig = newMigration(srv(), 'github.com/seamapi/prefixed-api-key');
    const seam = seamKey();
    const other = seamKey();
    const keyId = await migrateOne(mig, apiId, { hash: seam.hash });
    expect(await verify(srv(), other.key, { migrationId: mig })).toEqual({ valid: false, code: 'NOT_FOUND' });
    // Same prefix and short token, another long token.
    const wrongLong = `${seam.key.slice(0, seam.key.lastIndexOf('_') + 1)}${other.longToken}`;
    expect(await verify(srv(), wrongLong, { migrationId: mig })).toEqual({ valid: false, code: 'NOT_FOUND' });
    expect((await getKey(srv(), keyId)).start).toBe('');
    expect(await verify(srv(), seam.key)).toEqual({ valid: false, code: 'NOT_FOUND' });
    expect(await verify(srv(), seam.key, { migrationId: mig })).toMatchObject({ valid: true, code: 'VALID', keyId });
  });

  it('seamapi: the right long token in a key not of the library shape (<prefix>_<short>_<long>) is NOT_FOUND and moves nothing', async () => {
    const apiId = await createApi(srv());
    const mig = newMigration(srv(), 'github.com/seamapi/prefixed-api-key');
    const seam = seamKey();
    const keyId = await migrateOne(mig, apiId, { hash: seam.hash });
    const short = seam.key.split('_')[1] as string;
    for (const malformed of [seam.longToken, `_${seam.longToken}`, `mycompany_${seam.longToken}`, `mycompany__${seam.longToken}`, `_${short}_${seam.longToken}`]) {
      expect(await verify(srv(), malformed, { migrationId: mig })).toEqual({ valid: false, code: 'NOT_FOUND' });
    }
    expect((await getKey(srv(), keyId)).start).toBe('');
    expect(await verify(srv(), seam.key, { migrationId: mig })).toMatchObject({ valid: true, code: 'VALID', keyId });
  });

  it('seamapi: a pending key is found through any seamapi migration of its workspace (its hash is held once in the store), not through a sha256 one', async () => {
    const apiId = await createApi(srv());
    const mig = newMigration(srv(), 'github.com/seamapi/prefixed-api-key');
    const otherSeam = newMigration(srv(), 'github.com/seamapi/prefixed-api-key');
    const sha = newMigration(srv(), 'sha256');
    const seam = seamKey();
    const keyId = await migrateOne(mig, apiId, { hash: seam.hash });
    expect(await verify(srv(), seam.key, { migrationId: sha })).toEqual({ valid: false, code: 'NOT_FOUND' });
    expect(await verify(srv(), seam.key)).toEqual({ valid: false, code: 'NOT_FOUND' });
    expect(await verify(srv(), seam.key, { migrationId: otherSeam })).toMatchObject({ valid: true, code: 'VALID', keyId });
    expect(await verify(srv(), seam.key)).toMatchObject({ valid: true, code: 'VALID', keyId });
  });

  it('seamapi: the move keeps every field (credits spent at the first verification stay spent)', async () => {
    const apiId = await createApi(srv());
    const mig = newMigration(srv(), 'github.com/seamapi/prefixed-api-key');
    const stem = uniq('seamf');
    const seam = seamKey('sk');
    const keyId = await migrateOne(mig, apiId, {
      hash: seam.hash,
      name: 'seam full',
      externalId: `${stem}.user`,
      meta: { m: 1 },
      credits: { remaining: 2 },
      roles: [`${stem}_role`],
      permissions: [`${stem}.read`],
      ratelimits: [{ name: 'hourly', limit: 10, duration: 3_600_000, autoApply: true }],
    });
    expect(await verify(srv(), seam.key, { migrationId: mig, permissions: `${stem}.read` })).toMatchObject({
      valid: true, code: 'VALID', keyId, name: 'seam full', meta: { m: 1 }, credits: 1, roles: [`${stem}_role`], permissions: [`${stem}.read`], identity: { externalId: `${stem}.user` },
      ratelimits: [{ name: 'hourly', remaining: 9 }],
    });
    expect(await verify(srv(), seam.key, { permissions: `${stem}.read` })).toMatchObject({ valid: true, code: 'VALID', keyId, credits: 0, ratelimits: [{ name: 'hourly', remaining: 8 }] });
    expect(await verify(srv(), seam.key)).toMatchObject({ valid: false, code: 'USAGE_EXCEEDED', keyId });
    expect(await getKey(srv(), keyId)).toMatchObject({ keyId, start: seam.start, name: 'seam full', meta: { m: 1 }, credits: { remaining: 0 }, identity: { externalId: `${stem}.user` }, roles: [`${stem}_role`], permissions: [`${stem}.read`] });
  });

});

/** A refusal of a key with these fields, what makes its next verification VALID, and that one's request. */
interface Refusal {
  code: string;
  fields: Record<string, unknown>;
  request?: Record<string, unknown>;
  mend?: Record<string, unknown>;
  valid?: Record<string, unknown>;
}

const REFUSALS: Refusal[] = [
  { code: 'DISABLED', fields: { enabled: false }, mend: { enabled: true } },
  { code: 'EXPIRED', fields: { expires: Date.now() - 60_000 }, mend: { expires: null } },
  { code: 'USAGE_EXCEEDED', fields: { credits: { remaining: 0 } }, mend: { credits: { remaining: 2 } } },
  // Nothing of the window is spent by the refusal: the VALID one then takes the whole limit.
  { code: 'RATE_LIMITED', fields: { ratelimits: [{ name: 'hourly', limit: 2, duration: 3_600_000 }] }, request: { ratelimits: [{ name: 'hourly', cost: 3 }] }, valid: { ratelimits: [{ name: 'hourly', cost: 2 }] } },
  { code: 'INSUFFICIENT_PERMISSIONS', fields: { permissions: ['seam.read'] }, request: { permissions: 'seam.write' }, valid: { permissions: 'seam.read' } },
];

describe('keys.migrateKeys 200: seamapi keys move on their first VALID verification only', () => {
  /** A pending seam key and a sha256-migrated key with the same fields (a normal key); their ids. */
  async function twins(fields: Record<string, unknown>): Promise<{ mig: string; seam: ReturnType<typeof seamKey>; keyId: string; normal: string; normalId: string }> {
    const apiId = await createApi(srv());
    const mig = newMigration(srv(), 'github.com/seamapi/prefixed-api-key');
    const seam = seamKey();
    const keyId = await migrateOne(mig, apiId, { hash: seam.hash, ...fields });
    const normal = legacyKey();
    const normalId = await migrateOne(newMigration(srv(), 'sha256'), apiId, { hash: sha256Hex(normal), ...fields });
    return { mig, seam, keyId, normal, normalId };
  }

  /** A verification's answer without what differs between two keys of the same fields (their ids, their limits' ids). */
  function alike(answer: { ratelimits?: { id: string }[] }): unknown {
    return { ...answer, keyId: undefined, ratelimits: answer.ratelimits?.map((r) => ({ ...r, id: undefined })) };
  }

  it.each(REFUSALS)('$code: answered as a normal key is, not moved; the first VALID one moves it', async ({ code, fields, request = {}, mend, valid = {} }) => {
    const { mig, seam, keyId, normal, normalId } = await twins(fields);
    const refused = await verify(srv(), seam.key, { migrationId: mig, ...request });
    expect(refused).toMatchObject({ valid: false, code, keyId });
    expect(alike(refused)).toEqual(alike(await verify(srv(), normal, request)));
    expect(await verify(srv(), seam.key)).toEqual({ valid: false, code: 'NOT_FOUND' });
    expect((await getKey(srv(), keyId)).start).toBe('');
    if (mend !== undefined) for (const id of [keyId, normalId]) expectOk(await call(srv(), 'keys.updateKey', { keyId: id, ...mend }));
    const accepted = await verify(srv(), seam.key, { migrationId: mig, ...valid });
    expect(accepted).toMatchObject({ valid: true, code: 'VALID', keyId });
    expect(alike(accepted)).toEqual(alike(await verify(srv(), normal, valid)));
    expect((await getKey(srv(), keyId)).start).toBe(seam.start);
    expect(await verify(srv(), seam.key)).toMatchObject({ valid: true, code: 'VALID', keyId });
  });

  it.each([
    ['400 permissions_query_syntax_error', { permissions: 'seam.read AND' }, 400, 'permissions_query_syntax_error'],
    ['412 precondition_failed (an unknown limit)', { ratelimits: [{ name: 'missing_limit' }] }, 412, 'precondition_failed'],
  ] as const)('%s: not moved, nothing spent; the first VALID one moves it', async (_, request, status, name) => {
    const { mig, seam, keyId } = await twins({ credits: { remaining: 2 }, permissions: ['seam.read'] });
    expectError(await call(srv(), 'keys.verifyKey', { key: seam.key, migrationId: mig, ...request }), status, name);
    expect(await verify(srv(), seam.key)).toEqual({ valid: false, code: 'NOT_FOUND' });
    expect(await getKey(srv(), keyId)).toMatchObject({ start: '', credits: { remaining: 2 } });
    expect(await verify(srv(), seam.key, { migrationId: mig })).toMatchObject({ valid: true, code: 'VALID', keyId, credits: 1 });
    expect(await verify(srv(), seam.key)).toMatchObject({ valid: true, code: 'VALID', keyId, credits: 0 });
  });

  it.each([true, false])('two at once, a refused one and a VALID one (the VALID one first: %s): each answered as alone, the key moved', async (validFirst) => {
    const { mig, seam, keyId } = await twins({ credits: { remaining: 3 }, permissions: ['seam.read'] });
    const refusing = { migrationId: mig, permissions: 'seam.write' };
    const [refused, accepted] = validFirst
      ? (await Promise.all([verify(srv(), seam.key, { migrationId: mig }), verify(srv(), seam.key, refusing)])).reverse()
      : await Promise.all([verify(srv(), seam.key, refusing), verify(srv(), seam.key, { migrationId: mig })]);
    expect(refused).toMatchObject({ valid: false, code: 'INSUFFICIENT_PERMISSIONS', keyId });
    expect(accepted).toMatchObject({ valid: true, code: 'VALID', keyId, credits: 2 });
    expect(await getKey(srv(), keyId)).toMatchObject({ start: seam.start, credits: { remaining: 2 } });
    expect(await verify(srv(), seam.key)).toMatchObject({ valid: true, code: 'VALID', keyId, credits: 1 });
  });

  it('two VALID at once: both VALID, credits spent by each, the key moved once', async () => {
    const { mig, seam, keyId } = await twins({ credits: { remaining: 3 } });
    const both = await Promise.all([verify(srv(), seam.key, { migrationId: mig }), verify(srv(), seam.key, { migrationId: mig })]);
    expect(both.map((v: { code: string }) => v.code)).toEqual(['VALID', 'VALID']);
    expect(both.map((v: { credits: number }) => v.credits).sort()).toEqual([1, 2]);
    expect(await getKey(srv(), keyId)).toMatchObject({ start: seam.start, credits: { remaining: 1 } });
    expect(await verify(srv(), seam.key)).toMatchObject({ valid: true, code: 'VALID', keyId, credits: 0 });
  });
});

describe('keys.migrateKeys 200: migrated keys with the other key procedures', () => {
  it('keys.rerollKey on migrated keys (sha256, and seam once moved): a new, non-empty keyward key each, VALID; the old one EXPIRED', async () => {
    const apiId = await createApi(srv());
    const sha = newMigration(srv(), 'sha256');
    const seamMig = newMigration(srv(), 'github.com/seamapi/prefixed-api-key');
    const legacy = legacyKey();
    const seam = seamKey();
    const a = await migrateOne(sha, apiId, { hash: sha256Hex(legacy), name: 'a' });
    const b = await migrateOne(seamMig, apiId, { hash: seam.hash, name: 'b' });
    expect(await verify(srv(), seam.key, { migrationId: seamMig })).toMatchObject({ valid: true, keyId: b });
    const rerolled = [];
    for (const keyId of [a, b]) rerolled.push(expectOk(await call(srv(), 'keys.rerollKey', { keyId, expiration: 0 })) as { keyId: string; key: string });
    const [ra, rb] = rerolled as [{ keyId: string; key: string }, { keyId: string; key: string }];
    expect(ra.key).not.toBe('');
    expect(rb.key).not.toBe('');
    expect(ra.key).not.toBe(rb.key);
    expect(base58Decode(ra.key).length).toBeGreaterThanOrEqual(16);
    expect(await verify(srv(), ra.key)).toMatchObject({ valid: true, code: 'VALID', keyId: ra.keyId, name: 'a' });
    expect(await verify(srv(), rb.key)).toMatchObject({ valid: true, code: 'VALID', keyId: rb.keyId, name: 'b' });
    expect(await verify(srv(), legacy)).toMatchObject({ valid: false, code: 'EXPIRED', keyId: a });
    expect(await verify(srv(), seam.key)).toMatchObject({ valid: false, code: 'EXPIRED', keyId: b });
  });

  it('keys.updateKey on a pending seam key: the update is kept through the move', async () => {
    const apiId = await createApi(srv());
    const mig = newMigration(srv(), 'github.com/seamapi/prefixed-api-key');
    const seam = seamKey();
    const keyId = await migrateOne(mig, apiId, { hash: seam.hash, name: 'before' });
    expectOk(await call(srv(), 'keys.updateKey', { keyId, name: 'after', credits: { remaining: 3 } }));
    expect(await verify(srv(), seam.key, { migrationId: mig })).toMatchObject({ valid: true, code: 'VALID', keyId, name: 'after', credits: 2 });
  });

  it('keys.deleteKey on a pending seam key: verify {migrationId} stays NOT_FOUND; the hash may be migrated again', async () => {
    const apiId = await createApi(srv());
    const mig = newMigration(srv(), 'github.com/seamapi/prefixed-api-key');
    const seam = seamKey();
    const keyId = await migrateOne(mig, apiId, { hash: seam.hash });
    expectOk(await call(srv(), 'keys.deleteKey', { keyId }));
    expect(await verify(srv(), seam.key, { migrationId: mig })).toEqual({ valid: false, code: 'NOT_FOUND' });
    const again = await migrateOne(mig, apiId, { hash: seam.hash });
    expect(again).not.toBe(keyId);
    expect(await verify(srv(), seam.key, { migrationId: mig })).toMatchObject({ valid: true, code: 'VALID', keyId: again });
  });
});

describe('keys.migrateKeys 200: duplicates', () => {
  it('a hash migrated by an earlier call → failed (the other keys of the call are migrated)', async () => {
    const apiId = await createApi(srv());
    const mig = newMigration(srv(), 'sha256');
    const key = legacyKey();
    const keyId = await migrateOne(mig, apiId, { hash: sha256Hex(key), name: 'first' });
    const fresh = sha256Hex(legacyKey());
    const res = await migrate(mig, apiId, [{ hash: sha256Hex(key), name: 'second' }, { hash: fresh }]);
    expect(res).toEqual({ migrated: [{ hash: fresh, keyId: expect.stringMatching(/^key_/) }], failed: [sha256Hex(key)] });
    expect(await verify(srv(), key)).toMatchObject({ valid: true, keyId, name: 'first' });
    expect(await listKeyIds(apiId)).toEqual([keyId, res.migrated[0]?.keyId].sort());
  });

  it('a hash repeated in one call: the first is migrated, the repeat → failed', async () => {
    const apiId = await createApi(srv());
    const mig = newMigration(srv(), 'sha256');
    const key = legacyKey();
    const hash = sha256Hex(key);
    const res = await migrate(mig, apiId, [{ hash, name: 'first' }, { hash, name: 'second' }]);
    expect(res).toEqual({ migrated: [{ hash, keyId: expect.stringMatching(/^key_/) }], failed: [hash] });
    expect(await verify(srv(), key)).toMatchObject({ valid: true, keyId: res.migrated[0]?.keyId, name: 'first' });
    expect(await listKeyIds(apiId)).toEqual([res.migrated[0]?.keyId]);
  });

  it('sha256-base64: a hash migrated before, or repeated → failed', async () => {
    const apiId = await createApi(srv());
    const mig = newMigration(srv(), 'sha256-base64');
    const a = sha256Base64(legacyKey());
    const b = sha256Base64(legacyKey());
    const first = await migrate(mig, apiId, [{ hash: a }]);
    const second = await migrate(mig, apiId, [{ hash: a }, { hash: b }, { hash: b }]);
    expect(second).toEqual({ migrated: [{ hash: b, keyId: expect.stringMatching(/^key_/) }], failed: [a, b] });
    expect(await listKeyIds(apiId)).toEqual([first.migrated[0]?.keyId, second.migrated[0]?.keyId].sort());
  });

  it('seamapi: a pending hash migrated again (by its migration or another of the workspace), or repeated → failed', async () => {
    const apiId = await createApi(srv());
    const mig = newMigration(srv(), 'github.com/seamapi/prefixed-api-key');
    const seam = seamKey();
    const keyId = await migrateOne(mig, apiId, { hash: seam.hash });
    expect(await migrate(mig, apiId, [{ hash: seam.hash }, { hash: seam.hash }])).toEqual({ migrated: [], failed: [seam.hash, seam.hash] });
    expect(await migrate(newMigration(srv(), 'github.com/seamapi/prefixed-api-key'), apiId, [{ hash: seam.hash }])).toEqual({ migrated: [], failed: [seam.hash] });
    expect(await listKeyIds(apiId)).toEqual([keyId]);
    expect(await verify(srv(), seam.key, { migrationId: mig })).toMatchObject({ valid: true, keyId });
  });

  it('seamapi: a hash whose key was already moved by its first verification → failed (no second key)', async () => {
    const apiId = await createApi(srv());
    const mig = newMigration(srv(), 'github.com/seamapi/prefixed-api-key');
    const seam = seamKey();
    const keyId = await migrateOne(mig, apiId, { hash: seam.hash });
    expect(await verify(srv(), seam.key, { migrationId: mig })).toMatchObject({ valid: true, keyId });
    expect(await migrate(mig, apiId, [{ hash: seam.hash }])).toEqual({ migrated: [], failed: [seam.hash] });
    expect(await listKeyIds(apiId)).toEqual([keyId]);
  });

  it('seamapi: a hash another workspace\'s migration holds, pending or moved → failed; their key is unchanged', async () => {
    const otherWs = srv().newWorkspace();
    const foreign = { ...srv(), rootKey: srv().rootKeyWith(['*'], otherWs).key };
    const theirApi = await createApi(foreign);
    const theirMig = newMigration(srv(), 'github.com/seamapi/prefixed-api-key', otherWs);
    const pending = seamKey();
    const moved = seamKey();
    const theirs = expectOk(await call(foreign, 'keys.migrateKeys', { migrationId: theirMig, apiId: theirApi, keys: [{ hash: pending.hash }, { hash: moved.hash }] })) as Migrated;
    expect(theirs.failed).toEqual([]);
    expect(await verify(foreign, moved.key, { migrationId: theirMig })).toMatchObject({ valid: true, keyId: theirs.migrated[1]?.keyId });
    const apiId = await createApi(srv());
    const mig = newMigration(srv(), 'github.com/seamapi/prefixed-api-key');
    expect(await migrate(mig, apiId, [{ hash: pending.hash }, { hash: moved.hash }])).toEqual({ migrated: [], failed: [pending.hash, moved.hash] });
    expect(await verify(srv(), pending.key, { migrationId: mig })).toEqual({ valid: false, code: 'NOT_FOUND' });
    expect(await verify(foreign, pending.key, { migrationId: theirMig })).toMatchObject({ valid: true, keyId: theirs.migrated[0]?.keyId });
    expect(await verify(foreign, moved.key)).toMatchObject({ valid: true, keyId: theirs.migrated[1]?.keyId });
    expect(await listKeyIds(apiId)).toEqual([]);
  });

  it('seamapi, a store written before placeholders were one per hash: its pending key verifies and moves through its migration, and its hash → failed in any migration', async () => {
    const apiId = await createApi(srv());
    const mig = newMigration(srv(), 'github.com/seamapi/prefixed-api-key');
    const seam = seamKey();
    const keyId = await migrateOne(mig, apiId, { hash: seam.hash });
    // As such a store held it: under a digest of (migration id, legacy digest).
    const former = createHash('sha256').update('keyward-migration\0').update(mig).update('\0').update(Buffer.from(seam.hash, 'hex')).digest();
    direct.transact(() => {
      const record = getKeyRecord(keyId);
      if (record === undefined) throw new Error(`no key ${keyId}`);
      native.del('key_records', Buffer.from(record.hash, 'base64'));
      saveKey({ ...record, hash: former.toString('base64') }, record);
      native.put('keys', keyId, former);
    });
    const otherWs = srv().newWorkspace();
    const foreign = { ...srv(), rootKey: srv().rootKeyWith(['*'], otherWs).key };
    const theirMig = newMigration(srv(), 'github.com/seamapi/prefixed-api-key', otherWs);
    for (const [server, migrationId, api] of [[srv(), mig, apiId], [srv(), newMigration(srv(), 'github.com/seamapi/prefixed-api-key'), apiId], [foreign, theirMig, await createApi(foreign)]] as const) {
      expect(expectOk(await call(server, 'keys.migrateKeys', { migrationId, apiId: api, keys: [{ hash: seam.hash }] }))).toEqual({ migrated: [], failed: [seam.hash] });
    }
    expect(await verify(srv(), seam.key)).toEqual({ valid: false, code: 'NOT_FOUND' });
    expect(await verify(srv(), seam.key, { migrationId: mig, permissions: 'nope' })).toMatchObject({ valid: false, code: 'INSUFFICIENT_PERMISSIONS', keyId });
    expect(await verify(srv(), seam.key, { migrationId: mig })).toMatchObject({ valid: true, code: 'VALID', keyId });
    expect(await verify(srv(), seam.key)).toMatchObject({ valid: true, code: 'VALID', keyId });
    expect((await getKey(srv(), keyId)).start).toBe(seam.start);
    expect(await migrate(mig, apiId, [{ hash: seam.hash }])).toEqual({ migrated: [], failed: [seam.hash] });
  });

  it('sha256: the hash of a key keyward made (keys.createKey) → failed; that key is unchanged', async () => {
    const apiId = await createApi(srv());
    const mig = newMigration(srv(), 'sha256');
    const made = await newKey(srv(), { apiId, name: 'native' });
    expect(await migrate(mig, apiId, [{ hash: sha256Hex(made.key), name: 'imported' }])).toEqual({ migrated: [], failed: [sha256Hex(made.key)] });
    expect(await verify(srv(), made.key)).toMatchObject({ valid: true, keyId: made.keyId, name: 'native' });
    expect(await listKeyIds(apiId)).toEqual([made.keyId]);
  });

  it('sha256: the hash of another workspace\'s key → failed; that key stays the other workspace\'s, unchanged', async () => {
    const otherWs = srv().newWorkspace();
    const foreign = { ...srv(), rootKey: srv().rootKeyWith(['*'], otherWs).key };
    const made = await newKey(foreign, { name: 'theirs' });
    const apiId = await createApi(srv());
    const mig = newMigration(srv(), 'sha256');
    expect(await migrate(mig, apiId, [{ hash: sha256Hex(made.key), name: 'mine' }])).toEqual({ migrated: [], failed: [sha256Hex(made.key)] });
    expect(await verify(srv(), made.key)).toEqual({ valid: false, code: 'NOT_FOUND' });
    expect(await verify(foreign, made.key)).toMatchObject({ valid: true, keyId: made.keyId, name: 'theirs' });
    expect(await listKeyIds(apiId)).toEqual([]);
  });

  it('a failed-only call writes nothing: no identity, permission or role of it is created', async () => {
    const apiId = await createApi(srv());
    const mig = newMigration(srv(), 'sha256');
    const hash = sha256Hex(legacyKey());
    await migrateOne(mig, apiId, { hash });
    const stem = uniq('dupw');
    expect(await migrate(mig, apiId, [{ hash, externalId: `${stem}.u`, permissions: [`${stem}.p`], roles: [`${stem}_r`] }])).toEqual({ migrated: [], failed: [hash] });
    expect(await listed('identities.listIdentities', stem)).toEqual([]);
    expect(await listed('permissions.listPermissions', stem)).toEqual([]);
    expect(await listed('permissions.listRoles', stem)).toEqual([]);
  });
});

describe('keys.migrateKeys 200: identities, permissions and roles are found or created', () => {
  it('two calls naming the same externalId / permission / role make one of each, shared by both keys', async () => {
    const apiId = await createApi(srv());
    const mig = newMigration(srv(), 'sha256');
    const stem = uniq('foc');
    const fields = { externalId: `${stem}.user`, permissions: [`${stem}.read`], roles: [`${stem}_role`] };
    const a = await migrateOne(mig, apiId, { hash: sha256Hex(legacyKey()), ...fields });
    const b = await migrateOne(mig, apiId, { hash: sha256Hex(legacyKey()), ...fields });
    const identities = await listed('identities.listIdentities', stem);
    expect(identities).toEqual([expect.objectContaining({ externalId: `${stem}.user` })]);
    expect((await listed('permissions.listPermissions', stem)).map((p) => p.slug)).toEqual([`${stem}.read`]);
    const roles = await listed('permissions.listRoles', stem);
    expect(roles.map((r) => r.name)).toEqual([`${stem}_role`]);
    for (const keyId of [a, b]) {
      const got = await getKey(srv(), keyId);
      expect(got.identity).toMatchObject({ id: identities[0]?.id, externalId: `${stem}.user` });
      expect(got.roles).toEqual([`${stem}_role`]);
      expect(got.permissions).toEqual([`${stem}.read`]);
    }
  });

  it('one call naming the same externalId / permission / role on many keys makes one of each', async () => {
    const apiId = await createApi(srv());
    const mig = newMigration(srv(), 'sha256');
    const stem = uniq('foc1');
    const fields = { externalId: `${stem}.user`, permissions: [`${stem}.read`, `${stem}.write`], roles: [`${stem}_a`, `${stem}_b`] };
    const res = await migrate(mig, apiId, Array.from({ length: 5 }, () => ({ hash: sha256Hex(legacyKey()), ...fields })));
    expect(res.migrated).toHaveLength(5);
    expect(await listed('identities.listIdentities', stem)).toHaveLength(1);
    expect((await listed('permissions.listPermissions', stem)).map((p) => p.slug).sort()).toEqual([`${stem}.read`, `${stem}.write`]);
    expect((await listed('permissions.listRoles', stem)).map((r) => r.name).sort()).toEqual([`${stem}_a`, `${stem}_b`]);
  });

  it('the same role or permission twice in one key\'s lists is assigned once', async () => {
    const apiId = await createApi(srv());
    const mig = newMigration(srv(), 'sha256');
    const stem = uniq('twice');
    const keyId = await migrateOne(mig, apiId, { hash: sha256Hex(legacyKey()), permissions: [`${stem}.p`, `${stem}.p`], roles: [`${stem}_r`, `${stem}_r`] });
    const got = await getKey(srv(), keyId);
    expect(got.roles).toEqual([`${stem}_r`]);
    expect(got.permissions).toEqual([`${stem}.p`]);
    expect(await listed('permissions.listRoles', stem)).toHaveLength(1);
    expect(await listed('permissions.listPermissions', stem)).toHaveLength(1);
  });

  it('existing ones are used: an identity, a permission, and a role with its permissions', async () => {
    const apiId = await createApi(srv());
    const mig = newMigration(srv(), 'sha256');
    const stem = uniq('exist');
    const identityId = expectOk(await call(srv(), 'identities.createIdentity', { externalId: `${stem}.user`, meta: { tier: 'gold' } })).identityId as string;
    const permissionId = expectOk(await call(srv(), 'permissions.createPermission', { name: 'existing', slug: `${stem}.own` })).permissionId as string;
    const role = await newRole(srv(), [`${stem}.via.role`], `${stem}_role`);
    const key = legacyKey();
    const keyId = await migrateOne(mig, apiId, { hash: sha256Hex(key), externalId: `${stem}.user`, permissions: [`${stem}.own`], roles: [role] });
    expect((await getKey(srv(), keyId)).identity).toMatchObject({ id: identityId, externalId: `${stem}.user` });
    expect(await verify(srv(), key, { permissions: `${stem}.own AND ${stem}.via.role` })).toMatchObject({ valid: true, code: 'VALID', identity: { id: identityId, externalId: `${stem}.user`, meta: { tier: 'gold' } } });
    const perms = await listed('permissions.listPermissions', stem);
    expect(perms.map((p) => p.slug).sort()).toEqual([`${stem}.own`, `${stem}.via.role`]);
    expect(perms.find((p) => p.slug === `${stem}.own`)?.id).toBe(permissionId);
    expect(await listed('identities.listIdentities', stem)).toHaveLength(1);
    expect(await listed('permissions.listRoles', stem)).toHaveLength(1);
  });

  it('a role created by migrateKeys is an ordinary role: no permissions, and getRole finds it', async () => {
    const apiId = await createApi(srv());
    const mig = newMigration(srv(), 'sha256');
    const stem = uniq('newrole');
    await migrateOne(mig, apiId, { hash: sha256Hex(legacyKey()), roles: [`${stem}_role`] });
    const role = expectOk(await call(srv(), 'permissions.getRole', { role: `${stem}_role` }));
    expect(role).toMatchObject({ id: expect.stringMatching(/^role_/), name: `${stem}_role` });
    expect(role.permissions ?? []).toEqual([]);
  });
});
