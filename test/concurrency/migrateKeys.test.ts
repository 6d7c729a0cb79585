// keys.migrateKeys under concurrency: two serving threads (KEYWARD_THREADS=2) share one LMDB
// environment; 8 calls in flight at once, each on its own connection. Calls naming the same
// externalIds / permissions / roles must find or create ONE of each; calls with overlapping
// hashes must migrate every hash exactly once (each in `migrated` of exactly one call, in
// `failed` of every other call naming it); concurrent first verifications of a pending seam
// key with migrationId move it once (only VALID ones move it) and spend its credits exactly;
// calls of two workspaces naming the same seam hashes migrate each hash once in the store.
import http from 'node:http';
import { beforeAll, describe, expect, it } from 'vitest';
import { postWithAgent } from '../helpers/agent.js';
import { liveServer } from '../helpers/live.js';
import { bootstrapWorkspace, call, cli, createApi, expectOk, rootKeyWith } from '../helpers/server.js';
import { uniq } from '../helpers/keys.js';
import { legacyKey, seamKey, sha256Hex } from '../helpers/migrations.js';

const srv = liveServer({ env: { KEYWARD_THREADS: '2' } });
let migrationId = '';
let seamMigrationId = '';

async function newMigration(ws: string, algorithm: string): Promise<string> {
  const res = await cli(['migrations', 'create', '--workspace', ws, '--algorithm', algorithm], srv().dataDir);
  if (res.code !== 0) throw new Error(`migrations create failed (${String(res.code)}): ${res.stderr}`);
  return res.json.migrationId as string;
}

beforeAll(async () => {
  const ws = await bootstrapWorkspace(srv().dataDir);
  migrationId = await newMigration(ws, 'sha256');
  seamMigrationId = await newMigration(ws, 'github.com/seamapi/prefixed-api-key');
});

interface Migrated {
  migrated: { hash: string; keyId: string }[];
  failed: string[];
}

/** The calls at once, each on a connection of its own (one agent, a socket per call). */
async function concurrently<T = Migrated>(bodies: unknown[], procedure = 'keys.migrateKeys'): Promise<T[]> {
  const s = srv();
  const agent = new http.Agent({ keepAlive: false, maxSockets: bodies.length });
  try {
    const replies = await Promise.all(bodies.map((b) => postWithAgent(agent, `${s.url}/v2/${procedure}`, s.rootKey, b)));
    for (const r of replies) expect(r.status, r.text).toBe(200);
    return replies.map((r) => (JSON.parse(r.text) as { data: T }).data);
  } finally {
    agent.destroy();
  }
}

async function listAll(procedure: string, search: string): Promise<{ id: string; [k: string]: unknown }[]> {
  const res = await call(srv(), procedure, { search, limit: 100 });
  const data = expectOk(res) as { id: string }[];
  expect(res.json.pagination.hasMore).toBe(false);
  return data;
}

describe('concurrent keys.migrateKeys', () => {
  it.each([1, 2, 3])('round %i: 8 calls, different hashes, the same externalIds / permissions / roles → one of each', async () => {
    const apiId = await createApi(srv());
    const stem = uniq('cmig');
    const externalIds = [`${stem}.alice`, `${stem}.bob`];
    const permissions = [`${stem}.read`, `${stem}.write`, `${stem}.admin`];
    const roles = [`${stem}_viewer`, `${stem}_editor`];
    const keys = Array.from({ length: 8 }, () => Array.from({ length: 4 }, () => legacyKey()));
    const bodies = keys.map((batch) => ({
      migrationId,
      apiId,
      keys: batch.map((k, j) => ({ hash: sha256Hex(k), externalId: externalIds[j % 2], permissions, roles })),
    }));
    const results = await concurrently(bodies);
    for (const [i, r] of results.entries()) {
      expect(r.failed).toEqual([]);
      expect(r.migrated.map((m) => m.hash)).toEqual((keys[i] as string[]).map(sha256Hex));
    }

    const identities = await listAll('identities.listIdentities', stem);
    expect(identities.map((x) => x.externalId).sort()).toEqual([...externalIds].sort());
    expect((await listAll('permissions.listPermissions', stem)).map((p) => p.slug).sort()).toEqual([...permissions].sort());
    expect((await listAll('permissions.listRoles', stem)).map((r) => r.name).sort()).toEqual([...roles].sort());

    // Every key points at the one identity of its externalId and carries every role and permission.
    const idOf = new Map(identities.map((x) => [x.externalId as string, x.id]));
    for (const [i, r] of results.entries()) {
      for (const [j, m] of r.migrated.entries()) {
        const got = expectOk(await call(srv(), 'keys.getKey', { keyId: m.keyId }));
        const externalId = externalIds[j % 2] as string;
        expect(got.identity).toMatchObject({ id: idOf.get(externalId), externalId });
        expect([...got.roles].sort()).toEqual([...roles].sort());
        expect([...got.permissions].sort()).toEqual([...permissions].sort());
        const v = expectOk(await call(srv(), 'keys.verifyKey', { key: (keys[i] as string[])[j], permissions: `${stem}.admin` }));
        expect(v).toMatchObject({ valid: true, code: 'VALID', keyId: m.keyId });
      }
    }
  });

  it.each([1, 2, 3])('round %i: 8 calls, keys with only an externalId (drafted before the write, importKeys.ts) → one identity per externalId, every key on it', async () => {
    const apiId = await createApi(srv());
    const stem = uniq('cext');
    const externalIds = [`${stem}.alice`, `${stem}.bob`, `${stem}.carol`];
    // carol exists before the calls; alice and bob are new to every one of them.
    const carolId = expectOk(await call(srv(), 'identities.createIdentity', { externalId: `${stem}.carol` })).identityId as string;
    const keys = Array.from({ length: 8 }, () => Array.from({ length: 30 }, () => legacyKey()));
    const bodies = keys.map((batch) => ({ migrationId, apiId, keys: batch.map((k, j) => ({ hash: sha256Hex(k), externalId: externalIds[j % 3], credits: { remaining: 3 } })) }));
    const results = await concurrently(bodies);
    const identities = await listAll('identities.listIdentities', stem);
    expect(identities.map((x) => x.externalId).sort()).toEqual([...externalIds].sort());
    const idOf = new Map(identities.map((x) => [x.externalId as string, x.id]));
    expect(idOf.get(`${stem}.carol`)).toBe(carolId);
    for (const [i, r] of results.entries()) {
      expect(r.failed).toEqual([]);
      for (const [j, m] of r.migrated.entries()) {
        const externalId = externalIds[j % 3] as string;
        const v = expectOk(await call(srv(), 'keys.verifyKey', { key: (keys[i] as string[])[j] }));
        expect(v).toMatchObject({ valid: true, code: 'VALID', keyId: m.keyId, credits: 2, identity: { id: idOf.get(externalId), externalId } });
      }
    }
  });

  it.each([1, 2, 3])('round %i: 8 calls with overlapping hashes → every hash migrated exactly once', async () => {
    const apiId = await createApi(srv());
    // 24 hashes; call i names hashes 2i … 2i+9 (mod 24): each hash is in 3 to 5 calls.
    const keys = Array.from({ length: 24 }, () => legacyKey());
    const hashes = keys.map(sha256Hex);
    const named = Array.from({ length: 8 }, (_, i) => Array.from({ length: 10 }, (_, j) => hashes[(2 * i + j) % 24] as string));
    const results = await concurrently(named.map((hs) => ({ migrationId, apiId, keys: hs.map((hash) => ({ hash })) })));

    const winner = new Map<string, string>();
    for (const [i, r] of results.entries()) {
      // Each call accounts for each hash it named exactly once: migrated or failed.
      expect([...r.migrated.map((m) => m.hash), ...r.failed].sort()).toEqual([...(named[i] as string[])].sort());
      for (const m of r.migrated) {
        expect(winner.has(m.hash), `${m.hash} migrated by two calls`).toBe(false);
        winner.set(m.hash, m.keyId);
      }
    }
    const namedAll = named.flat();
    expect(winner.size).toBe(24);
    expect(results.reduce((n, r) => n + r.migrated.length, 0)).toBe(24);
    expect(results.reduce((n, r) => n + r.failed.length, 0)).toBe(namedAll.length - 24);
    // A hash is failed in every call naming it but the one that migrated it.
    for (const h of hashes) {
      const failedIn = results.filter((r) => r.failed.includes(h)).length;
      expect(failedIn).toBe(namedAll.filter((x) => x === h).length - 1);
    }

    const listed = (expectOk(await call(srv(), 'apis.listKeys', { apiId, limit: 100 })) as { keyId: string }[]).map((k) => k.keyId).sort();
    expect(listed).toEqual([...winner.values()].sort());
    for (const [i, key] of keys.entries()) {
      expect(expectOk(await call(srv(), 'keys.verifyKey', { key }))).toMatchObject({ valid: true, code: 'VALID', keyId: winner.get(hashes[i] as string) });
    }
  });

  it.each([1, 2, 3])('round %i: 8 calls from two workspaces, each with a seam migration, naming the same legacy hashes → every hash migrated exactly once in the store', async () => {
    const other = await cli(['workspaces', 'create'], srv().dataDir);
    if (other.code !== 0) throw new Error(`workspaces create failed: ${other.stderr}`);
    const otherWs = (other.json as { workspaceId: string }).workspaceId;
    const theirs = { url: srv().url, rootKey: (await rootKeyWith(srv(), ['*'], otherWs)).key };
    const sides = [
      { server: { url: srv().url, rootKey: srv().rootKey }, migrationId: seamMigrationId, apiId: await createApi(srv()) },
      { server: theirs, migrationId: await newMigration(otherWs, 'github.com/seamapi/prefixed-api-key'), apiId: await createApi(theirs) },
    ];
    const seams = Array.from({ length: 6 }, () => seamKey());
    const hashes = seams.map((k) => k.hash);
    const agent = new http.Agent({ keepAlive: false, maxSockets: 8 });
    let results: Migrated[];
    try {
      const replies = await Promise.all(Array.from({ length: 8 }, (_, i) => {
        const side = sides[i % 2] as (typeof sides)[number];
        return postWithAgent(agent, `${side.server.url}/v2/keys.migrateKeys`, side.server.rootKey, { migrationId: side.migrationId, apiId: side.apiId, keys: hashes.map((hash) => ({ hash })) });
      }));
      for (const r of replies) expect(r.status, r.text).toBe(200);
      results = replies.map((r) => (JSON.parse(r.text) as { data: Migrated }).data);
    } finally {
      agent.destroy();
    }
    const winner = new Map<string, number>();
    for (const [i, r] of results.entries()) {
      expect([...r.migrated.map((m) => m.hash), ...r.failed].sort()).toEqual([...hashes].sort());
      for (const m of r.migrated) {
        expect(winner.has(m.hash), `${m.hash} migrated twice`).toBe(false);
        winner.set(m.hash, i % 2);
      }
    }
    expect(winner.size).toBe(hashes.length);
    // Each key verifies through the migration of the workspace that won it, and only there.
    for (const seam of seams) {
      const won = winner.get(seam.hash) as number;
      for (const [s, side] of sides.entries()) {
        const v = expectOk(await call(side.server, 'keys.verifyKey', { key: seam.key, migrationId: side.migrationId }));
        expect(v).toMatchObject(s === won ? { valid: true, code: 'VALID' } : { valid: false, code: 'NOT_FOUND' });
      }
    }
  });

  it.each([1, 2, 3])('round %i: 8 concurrent first verifications {migrationId} of one pending seam key: one move, credits spent exactly', async () => {
    const apiId = await createApi(srv());
    const seam = seamKey();
    const res = expectOk(await call(srv(), 'keys.migrateKeys', { migrationId: seamMigrationId, apiId, keys: [{ hash: seam.hash, credits: { remaining: 5 } }] })) as Migrated;
    const keyId = res.migrated[0]?.keyId;
    expect(keyId).toMatch(/^key_/);
    const replies = await concurrently<{ valid: boolean; code: string; keyId?: string; credits?: number }>(Array.from({ length: 8 }, () => ({ key: seam.key, migrationId: seamMigrationId })), 'keys.verifyKey');
    for (const r of replies) expect(r.keyId).toBe(keyId);
    expect(replies.filter((r) => r.code === 'VALID').map((r) => r.credits).sort()).toEqual([0, 1, 2, 3, 4]);
    expect(replies.filter((r) => r.code !== 'VALID').map((r) => r.code)).toEqual(['USAGE_EXCEEDED', 'USAGE_EXCEEDED', 'USAGE_EXCEEDED']);
    const got = expectOk(await call(srv(), 'keys.getKey', { keyId }));
    expect(got).toMatchObject({ keyId, start: seam.start, credits: { remaining: 0 } });
    expect(expectOk(await call(srv(), 'keys.verifyKey', { key: seam.key }))).toMatchObject({ valid: false, code: 'USAGE_EXCEEDED', keyId });
    expect((expectOk(await call(srv(), 'apis.listKeys', { apiId })) as unknown[]).length).toBe(1);
  });

  it.each([1, 2, 3])('round %i: 8 concurrent first verifications {migrationId}, refused and VALID interleaved: each answered as alone, the key moved by the VALID ones only', async () => {
    const apiId = await createApi(srv());
    const seam = seamKey();
    const res = expectOk(await call(srv(), 'keys.migrateKeys', { migrationId: seamMigrationId, apiId, keys: [{ hash: seam.hash, credits: { remaining: 10 }, permissions: ['seam.read'] }] })) as Migrated;
    const keyId = res.migrated[0]?.keyId;
    type Reply = { valid: boolean; code: string; keyId?: string; credits?: number };
    const refusing = { key: seam.key, migrationId: seamMigrationId, permissions: 'seam.write' };
    // Refused ones alone first: the key stays pending.
    const refused = await concurrently<Reply>(Array.from({ length: 8 }, () => refusing), 'keys.verifyKey');
    expect(refused.map((r) => [r.code, r.keyId, r.credits])).toEqual(Array.from({ length: 8 }, () => ['INSUFFICIENT_PERMISSIONS', keyId, 10]));
    expect(expectOk(await call(srv(), 'keys.verifyKey', { key: seam.key }))).toEqual({ valid: false, code: 'NOT_FOUND' });
    const replies = await concurrently<Reply>(Array.from({ length: 8 }, (_, i) => (i % 2 === 0 ? refusing : { key: seam.key, migrationId: seamMigrationId })), 'keys.verifyKey');
    for (const r of replies) expect(r.keyId).toBe(keyId);
    expect(replies.filter((_, i) => i % 2 === 0).map((r) => r.code)).toEqual(Array.from({ length: 4 }, () => 'INSUFFICIENT_PERMISSIONS'));
    expect(replies.filter((_, i) => i % 2 === 1).map((r) => [r.code, r.credits]).sort()).toEqual([6, 7, 8, 9].map((credits) => ['VALID', credits]));
    expect(expectOk(await call(srv(), 'keys.getKey', { keyId }))).toMatchObject({ keyId, start: seam.start, credits: { remaining: 6 } });
    expect(expectOk(await call(srv(), 'keys.verifyKey', { key: seam.key }))).toMatchObject({ valid: true, code: 'VALID', keyId, credits: 5 });
  });
});
