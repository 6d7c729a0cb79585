// Concurrent key assignments: two serving threads (KEYWARD_THREADS=2) share one LMDB
// environment; 8 addRoles (8 different existing roles) and 8 addPermissions (8 different
// slugs) on one key, all in flight at once, each on its own connection, must lose no update.
import http from 'node:http';
import { describe, expect, it } from 'vitest';
import { liveServer } from '../helpers/live.js';
import { createApi } from '../helpers/server.js';
import { getKey, newKey, newRole, uniq } from '../helpers/keys.js';

const srv = liveServer({ env: { KEYWARD_THREADS: '2' } });

/** POST on a fresh connection (agent:false), so the 16 requests use 16 connections. */
function post(path: string, body: unknown): Promise<{ status: number; text: string }> {
  const s = srv();
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(`${s.url}${path}`, {
      method: 'POST',
      agent: false,
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${s.rootKey}`, 'Content-Length': Buffer.byteLength(payload), Connection: 'close' },
    }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

describe('concurrent addRoles / addPermissions on one key', () => {
  it.each([1, 2, 3])('round %i: 8 roles + 8 permissions in parallel → getKey shows all 8 + 8', async () => {
    const apiId = await createApi(srv());
    const stem = uniq('conc');
    const roles = await Promise.all(Array.from({ length: 8 }, (_, i) => newRole(srv(), [`${stem}.role${i}`], `${stem}_role_${i}`)));
    const slugs = Array.from({ length: 8 }, (_, i) => `${stem}.direct${i}`);
    const { keyId } = await newKey(srv(), { apiId });
    const results = await Promise.all([
      ...roles.map((r) => post('/v2/keys.addRoles', { keyId, roles: [r] })),
      ...slugs.map((p) => post('/v2/keys.addPermissions', { keyId, permissions: [p] })),
    ]);
    for (const r of results) expect(r.status, r.text).toBe(200);
    const got = await getKey(srv(), keyId);
    expect([...got.roles].sort()).toEqual([...roles].sort());
    const rolePerms = roles.map((_, i) => `${stem}.role${i}`);
    expect([...got.permissions].sort()).toEqual([...slugs, ...rolePerms].sort());
  });
});
