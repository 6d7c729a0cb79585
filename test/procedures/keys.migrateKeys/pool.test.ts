// keys.migrateKeys on a one-node server: the call's work runs on a pool thread
// (src/edits/importKeys.ts `run`, through workers/jobs.ts `elsewhere`). What it wrote, what it
// refused and why, as the serving thread would have answered, and the server serves on.
import { beforeAll, describe, expect, it } from 'vitest';
import { liveServer } from '../../helpers/live.js';
import { bootstrapWorkspace, call, cli, createApi, expectError, expectOk } from '../../helpers/server.js';
import { uniq } from '../../helpers/keys.js';
import { legacyKey, sha256Hex } from '../../helpers/migrations.js';

const srv = liveServer();
let migrationId = '';

beforeAll(async () => {
  const ws = await bootstrapWorkspace(srv().dataDir);
  const res = await cli(['migrations', 'create', '--workspace', ws, '--algorithm', 'sha256'], srv().dataDir);
  expect(res.code, res.stderr).toBe(0);
  migrationId = res.json.migrationId as string;
});

describe('keys.migrateKeys on the pool thread', () => {
  it('writes every field; the key verifies with its migrationId, then without', async () => {
    const apiId = await createApi(srv());
    const stem = uniq('pool');
    const key = legacyKey();
    const body = {
      migrationId,
      apiId,
      keys: [
        {
          hash: sha256Hex(key),
          name: 'moved',
          externalId: `${stem}.user`,
          meta: { plan: 'pro' },
          roles: [`${stem}_role`],
          permissions: [`${stem}.read`],
          credits: { remaining: 5 },
          ratelimits: [{ name: 'requests', limit: 10, duration: 60_000, autoApply: true }],
        },
      ],
    };
    const res = expectOk(await call(srv(), 'keys.migrateKeys', body)) as { migrated: { hash: string; keyId: string }[]; failed: string[] };
    expect(res.failed).toEqual([]);
    const keyId = res.migrated[0]?.keyId;
    expect(keyId).toMatch(/^key_/);
    expect(expectOk(await call(srv(), 'keys.getKey', { keyId }))).toMatchObject({ name: 'moved', meta: { plan: 'pro' }, identity: { externalId: `${stem}.user` }, credits: { remaining: 5 } });
    expect(expectOk(await call(srv(), 'keys.verifyKey', { key, migrationId }))).toMatchObject({ valid: true, code: 'VALID', keyId, credits: 4 });
    expect(expectOk(await call(srv(), 'keys.verifyKey', { key }))).toMatchObject({ valid: true, keyId, credits: 3 });
    // Present now: the same hash again is failed, not an error.
    expect(expectOk(await call(srv(), 'keys.migrateKeys', { migrationId, apiId, keys: [{ hash: sha256Hex(key) }] }))).toEqual({ migrated: [], failed: [sha256Hex(key)] });
  });

  it('refuses as the serving thread would: 404 migration, 404 API, 400 naming the bad hash; nothing written', async () => {
    const apiId = await createApi(srv());
    const good = sha256Hex(legacyKey());
    expectError(await call(srv(), 'keys.migrateKeys', { migrationId: 'mig_nosuch', apiId, keys: [{ hash: good }] }), 404, 'migration_not_found');
    expectError(await call(srv(), 'keys.migrateKeys', { migrationId, apiId: 'api_nosuch', keys: [{ hash: good }] }), 404, 'api_not_found');
    const bad = expectError(await call(srv(), 'keys.migrateKeys', { migrationId, apiId, keys: [{ hash: good }, { hash: 'not-hex' }] }), 400, 'invalid_input');
    expect(bad.errors?.[0]?.location).toBe('body.keys[1].hash');
    expect(expectOk(await call(srv(), 'apis.listKeys', { apiId }))).toEqual([]);
    expect(expectOk(await call(srv(), 'keys.migrateKeys', { migrationId, apiId, keys: [{ hash: good }, { hash: good }] }))).toMatchObject({ failed: [good] });
  });
});
