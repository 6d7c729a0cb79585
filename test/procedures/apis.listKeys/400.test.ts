import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, createApi, expectError } from '../../helpers/server.js';

const srv = inProcessServer();

describe('apis.listKeys 400', () => {
  it.each([
    ['limit 0', { limit: 0 }, 'limit'],
    ['limit 101', { limit: 101 }, 'limit'],
    ['limit -1', { limit: -1 }, 'limit'],
    ['limit 1.5', { limit: 1.5 }, 'limit'],
    ['limit a string', { limit: '10' }, 'limit'],
    ['decrypt a string', { decrypt: 'yes' }, 'decrypt'],
    ['externalId empty', { externalId: '' }, 'externalId'],
    ['externalId with spaces', { externalId: 'a b' }, 'externalId'],
    ['unknown field', { offset: 10 }, 'offset'],
    ['cursor a number', { cursor: 5 }, 'cursor'],
  ])('%s → invalid_input naming %s', async (_why, extra, field) => {
    const apiId = await createApi(srv());
    const error = expectError(await call(srv(), 'apis.listKeys', { apiId, ...extra }), 400, 'invalid_input');
    expect(JSON.stringify(error.errors) + error.detail).toContain(field);
  });

  it('missing apiId → invalid_input', async () => {
    expectError(await call(srv(), 'apis.listKeys', {}), 400, 'invalid_input');
  });

  it.each([
    ['garbage', 'not a cursor!!'],
    ['base64 of nothing useful', Buffer.from('hello').toString('base64url')],
    ['a key id', 'key_1234567890'],
  ])('a bad cursor (%s) → 400 with errors[]', async (_why, cursor) => {
    const apiId = await createApi(srv());
    const error = expectError(await call(srv(), 'apis.listKeys', { apiId, cursor }), 400);
    expect(error.type).toMatch(/\/(invalid_cursor|invalid_input)$/);
    expect(error.errors?.length).toBeGreaterThan(0);
  });

  it("another API's cursor → 400", async () => {
    const apiId = await createApi(srv());
    const other = await createApi(srv());
    // The shape a cursor for `other` would have (opaque to clients, but it must not be replayable).
    const cursor = Buffer.from(`keys:${other}:key_1ChHLyJ4MSgsBLR4emmHTf`).toString('base64url');
    expectError(await call(srv(), 'apis.listKeys', { apiId, cursor }), 400);
  });
});
