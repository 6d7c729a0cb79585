// Group commit (store/durability.ts, native/src/hot.rs): a verification the engine refuses
// with an error (400 permission-query syntax, 412 unknown limit) after a call that opened
// the turn's write batch must leave nothing open behind it. It once did: the batch stayed
// open, never committed, so every later management write answered 500, later verifications
// were acknowledged but lost at restart, and SIGTERM crashed.
import { afterAll, describe, expect, it } from 'vitest';
import { call, createApi, expectError, expectOk, startServer, stopAll } from '../helpers/server.js';

afterAll(stopAll);

describe('an engine error on a key that spends credits', () => {
  it('leaves the store writable and loses no acknowledged verification', async () => {
    let server = await startServer();
    const apiId = await createApi(server);
    const { key, keyId } = expectOk(await call(server, 'keys.createKey', { apiId, credits: { remaining: 100 }, ratelimits: [{ name: 'auto', limit: 1000, duration: 60_000, autoApply: true }] })) as { key: string; keyId: string };
    const verify = async (body: object = {}) => expectOk(await call(server, 'keys.verifyKey', { key, ...body })).credits as number;

    expect(await verify()).toBe(99);
    // Each refusal right after a credit-spending verification, by the body-reading way and
    // by the full way (an escaped character sends the body there).
    for (const raw of [`{"key":"${key}","permissions":"a AND"}`, `{"key":"${key}","permissions":"a\\u0020AND"}`]) {
      expectError(await call(server, 'keys.verifyKey', null, { rawBody: raw }), 400, 'permissions_query_syntax_error');
      expect(await verify()).toBeGreaterThan(0);
    }
    for (const raw of [`{"key":"${key}","ratelimits":[{"name":"nope"}]}`, `{"key":"${key}","ratelimits":[{"name":"n\\u006fpe"}]}`]) {
      expectError(await call(server, 'keys.verifyKey', null, { rawBody: raw }), 412, 'precondition_failed');
      expect(await verify()).toBeGreaterThan(0);
    }
    // Management writes still commit.
    expectOk(await call(server, 'apis.createApi', { name: 'after-the-refusals' }));
    expectOk(await call(server, 'keys.updateKey', { keyId, name: 'renamed' }));
    const last = await verify();
    expect(last).toBe(100 - 6);

    // What was acknowledged survives a restart, and the server stops cleanly.
    expect(await server.stop('SIGTERM')).toBe(0);
    server = await startServer({ dataDir: server.dataDir, rootKey: server.rootKey });
    const stored = expectOk(await call(server, 'keys.getKey', { keyId })) as { name: string; credits: { remaining: number } };
    expect(stored).toMatchObject({ name: 'renamed', credits: { remaining: last } });
  });
});
