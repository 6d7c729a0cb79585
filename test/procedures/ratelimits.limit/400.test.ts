// ratelimits.limit 400: bounds from reference/unkey-v2.md §1.3 and removed v1 fields (DESIGN.md §2).
import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, expectError } from '../../helpers/server.js';

const srv = inProcessServer();
const ok = { namespace: 'ns-400', identifier: 'u', limit: 10, duration: 60_000 };

describe('ratelimits.limit 400', () => {
  it.each([
    ['duration 999', { ...ok, duration: 999 }, 'duration'],
    ['duration 2592000001', { ...ok, duration: 2_592_000_001 }, 'duration'],
    ['duration not an integer', { ...ok, duration: 1500.5 }, 'duration'],
    ['limit 0', { ...ok, limit: 0 }, 'limit'],
    ['limit -1', { ...ok, limit: -1 }, 'limit'],
    ['limit a string', { ...ok, limit: '10' }, 'limit'],
    ['cost -1', { ...ok, cost: -1 }, 'cost'],
    ['cost 1.5', { ...ok, cost: 1.5 }, 'cost'],
    ['identifier empty', { ...ok, identifier: '' }, 'identifier'],
    ['identifier 513 chars', { ...ok, identifier: 'i'.repeat(513) }, 'identifier'],
    ['namespace empty', { ...ok, namespace: '' }, 'namespace'],
    ['namespace 513 chars', { ...ok, namespace: 'n'.repeat(513) }, 'namespace'],
    ['missing namespace', { identifier: 'u', limit: 10, duration: 60_000 }, 'namespace'],
    ['missing identifier', { namespace: 'n', limit: 10, duration: 60_000 }, 'identifier'],
    ['missing limit', { namespace: 'n', identifier: 'u', duration: 60_000 }, 'limit'],
    ['missing duration', { namespace: 'n', identifier: 'u', limit: 10 }, 'duration'],
    ['v1 async', { ...ok, async: true }, 'async'],
    ['v1 meta', { ...ok, meta: { a: 1 } }, 'meta'],
    ['v1 resources', { ...ok, resources: [{ type: 'x', id: 'y' }] }, 'resources'],
  ])('%s → invalid_input naming the field', async (why, body, field) => {
    for (const procedure of ['ratelimits.limit', 'ratelimit.limit']) {
      const error = expectError(await call(srv(), procedure, body), 400, 'invalid_input');
      expect(error.errors?.length).toBeGreaterThan(0);
      expect(error.detail).toContain(field);
      // Removed v1 fields say so (DESIGN.md §2).
      if (why.startsWith('v1 ')) expect(error.detail).toContain(`v1 \`${field}\``);
      expect(JSON.stringify(error.errors)).toContain(field);
    }
  });

  it('a refused request consumed nothing and 400s created no namespace', async () => {
    // The namespace used by the 400 bodies above was never created.
    expectError(await call(srv(), 'ratelimits.listOverrides', { namespace: 'ns-400' }), 404, 'ratelimit_namespace_not_found');
  });

  it('values at the bounds are accepted', async () => {
    for (const body of [{ ...ok, duration: 1_000 }, { ...ok, duration: 2_592_000_000 }, { ...ok, limit: 1, cost: 0 }, { ...ok, identifier: 'i'.repeat(512) }, { ...ok, identifier: '😀'.repeat(256) }]) {
      const res = await call(srv(), 'ratelimits.limit', body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(200);
    }
  });

  // Namespace names are 1–512 characters (reference §1.3). The namespace record is stored
  // under `${workspaceId}/${name}`, an LMDB key of at most 511 bytes, so names past 440
  // bytes are stored by their hash (src/store/ratelimits.ts namespaceKey), and all are accepted.
  it.each([
    ['512 ASCII characters', 'n'.repeat(512)],
    ['490 ASCII characters', 'n'.repeat(490)],
    ['256 two-byte characters (512 bytes)', 'é'.repeat(256)],
  ])('a namespace name of %s is accepted', async (_why, namespace) => {
    const res = await call(srv(), 'ratelimits.limit', { ...ok, namespace });
    expect(res.status, res.text.slice(0, 300)).toBe(200);
  });
});
