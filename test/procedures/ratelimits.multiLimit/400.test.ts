// ratelimits.multiLimit 400: a JSON array of 1–100 limit requests, each validated as limit's.
import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { limitOk, uniq } from '../../helpers/ratelimits.js';
import { call, expectError } from '../../helpers/server.js';

const srv = inProcessServer();
const item = { namespace: 'ns-multi-400', identifier: 'u', limit: 10, duration: 60_000 };

describe('ratelimits.multiLimit 400', () => {
  it.each([
    ['0 items', []],
    ['101 items', Array.from({ length: 101 }, () => item)],
    ['an object instead of an array', item],
    ['an item with duration 999', [item, { ...item, duration: 999 }]],
    ['an item with duration 2592000001', [{ ...item, duration: 2_592_000_001 }]],
    ['an item with limit 0', [{ ...item, limit: 0 }]],
    ['an item with cost -1', [{ ...item, cost: -1 }]],
    ['an item with identifier 513 chars', [{ ...item, identifier: 'i'.repeat(513) }]],
    ['an item with an empty identifier', [{ ...item, identifier: '' }]],
    ['an item missing namespace', [{ identifier: 'u', limit: 1, duration: 60_000 }]],
    ['an item with v1 async', [{ ...item, async: true }]],
    ['an item with v1 meta', [{ ...item, meta: {} }]],
    ['an item with v1 resources', [{ ...item, resources: [] }]],
    ['a non-object item', [item, 'x']],
  ])('%s → invalid_input', async (_why, body) => {
    for (const procedure of ['ratelimits.multiLimit', 'ratelimit.multiLimit']) {
      const error = expectError(await call(srv(), procedure, body), 400, 'invalid_input');
      expect(error.errors?.length).toBeGreaterThan(0);
    }
  });

  it('a v1 field is named in the message', async () => {
    for (const field of ['async', 'meta', 'resources']) {
      const error = expectError(await call(srv(), 'ratelimits.multiLimit', [{ ...item, [field]: true }]), 400, 'invalid_input');
      expect(error.detail).toContain(field);
      expect(JSON.stringify(error.errors)).toContain(field);
    }
  });

  it('a 400 consumes nothing from the valid items', async () => {
    const ns = uniq();
    const good = { namespace: ns, identifier: 'g', limit: 2, duration: 3_600_000 };
    await limitOk(srv(), { ...good, cost: 0 });
    expectError(await call(srv(), 'ratelimits.multiLimit', [good, { ...good, duration: 999 }]), 400, 'invalid_input');
    expect(await limitOk(srv(), { ...good, cost: 0 })).toMatchObject({ remaining: 2 });
  });
});
