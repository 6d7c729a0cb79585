// Crafted pagination cursors on every list procedure: a cursor keyward could not have issued
// (a next id of another form, however long; another workspace's list) is 400 invalid_cursor,
// never a 500 from the store (a store key is at most 511 bytes) nor a page of another list.
import { describe, expect, it } from 'vitest';
import { liveServer } from '../helpers/live.js';
import { call, createApi, expectError, expectOk, foreignRootKey, type CallResult, type Server } from '../helpers/server.js';

const srv = liveServer();

type Caller = Pick<Server, 'url' | 'rootKey'>;

/** Each list procedure: its body, and a call that adds one item to it. */
function lists(apiId: string): { procedure: string; body: Record<string, unknown>; add: (as: Caller, i: number) => Promise<CallResult> }[] {
  return [
    { procedure: 'apis.listKeys', body: { apiId }, add: (as) => call(as, 'keys.createKey', { apiId }) },
    { procedure: 'permissions.listPermissions', body: {}, add: (as, i) => call(as, 'permissions.createPermission', { name: `p${i}`, slug: `cursor.p${i}` }) },
    { procedure: 'permissions.listRoles', body: {}, add: (as, i) => call(as, 'permissions.createRole', { name: `cursor-r${i}` }) },
    { procedure: 'identities.listIdentities', body: {}, add: (as, i) => call(as, 'identities.createIdentity', { externalId: `cursor-${i}` }) },
    {
      procedure: 'ratelimits.listOverrides',
      body: { namespace: 'cursors' },
      add: async (as, i) => {
        // the namespace is created by its first limit call
        if (i === 0) expectOk(await call(as, 'ratelimits.limit', { namespace: 'cursors', identifier: 'x', limit: 5, duration: 60_000 }));
        return call(as, 'ratelimits.setOverride', { namespace: 'cursors', identifier: `o${i}`, limit: 1, duration: 1000 });
      },
    },
  ];
}

/** A cursor of the first page of one item, after `add` made two. */
async function issuedCursor(as: Caller, list: ReturnType<typeof lists>[number]): Promise<string> {
  for (let i = 0; i < 2; i++) expectOk(await list.add(as, i));
  const page = await call(as, list.procedure, { ...list.body, limit: 1 });
  expectOk(page);
  const cursor = page.json.pagination.cursor as string;
  expect(typeof cursor).toBe('string');
  expectOk(await call(as, list.procedure, { ...list.body, limit: 1, cursor }));
  return cursor;
}

describe('crafted cursors', () => {
  it('an issued cursor with its next id replaced by one keyward never issues → 400 invalid_cursor', async () => {
    for (const list of lists(await createApi(srv()))) {
      const text = Buffer.from(await issuedCursor(srv(), list), 'base64url').toString('utf8');
      const tag = text.slice(0, text.lastIndexOf(':') + 1);
      for (const id of ['0'.repeat(700), 'x'.repeat(480), 'key_with spaces', '../../etc', `key_${'z'.repeat(65)}`, '']) {
        const cursor = Buffer.from(`${tag}${id}`, 'utf8').toString('base64url').slice(0, 1024);
        expectError(await call(srv(), list.procedure, { ...list.body, cursor }), 400, 'invalid_cursor');
      }
    }
  });

  it("another workspace's cursor for the same list → 400 invalid_cursor", async () => {
    const other = { url: srv().url, rootKey: await foreignRootKey(srv()) };
    for (const list of lists('').filter((l) => l.procedure.startsWith('permissions.') || l.procedure.startsWith('identities.'))) {
      const cursor = await issuedCursor(other, list);
      expectError(await call(srv(), list.procedure, { ...list.body, limit: 1, cursor }), 400, 'invalid_cursor');
    }
  });
});
