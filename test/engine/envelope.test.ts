// The success envelope is written in two places: src/rpc/envelope.ts successBody, and the
// native hot calls, which always answer with the whole envelope (native/src/hot.rs
// Scratch::envelope). This is the golden test that keeps the two byte-for-byte equal.
import { describe, expect, it } from 'vitest';
import { tempStore } from '../helpers/tempStore.js';
import { limitCall, multiLimitCall, verifyCall, type HotAnswer } from '../helpers/engine.js';
import { Principal } from '../../src/auth/permissions.js';
import { newRequestId } from '../../src/rpc/requestId.js';
import { createApi } from '../../src/procedures/apis/createApi.js';
import { createKey } from '../../src/procedures/keys/createKey.js';
import { directCtx } from '../../src/request/direct.js';
import { successBody } from '../../src/rpc/envelope.js';
import { direct } from '../../src/store/db.js';
import { ensureNamespace } from '../../src/store/ratelimits.js';

const WS = 'ws_envelope_test';
const NOW = Date.UTC(2026, 0, 15, 12);

tempStore('keyward-envelope-');

const ctx = directCtx(new Principal(WS, 'rk_test', ['*']), NOW);

/**
 * The native answer under a request id of the engine's and under one given: the same effect,
 * the same data, and under the given id exactly the envelope successBody builds. `call` must
 * change nothing (it is made twice).
 */
function expectSameEnvelope(call: (requestId?: string) => HotAnswer): void {
  const requestId = newRequestId();
  const drawn = call();
  const whole = call(requestId);
  expect(whole.effect).toBe(drawn.effect);
  expect(whole.wrote).toBe(false);
  expect(drawn.envelope).toMatch(/^\{"meta":\{"requestId":"req_[A-Za-z0-9]{16}"\},"data":/);
  expect(drawn.envelope.replace(/"requestId":"req_\w+"/, `"requestId":"${requestId}"`)).toBe(whole.envelope);
  expect(whole.envelope).toBe(successBody(requestId, whole.data));
  expect(JSON.parse(whole.envelope)).toEqual({ meta: { requestId }, data: drawn.data });
}

describe('native success envelope = successBody', () => {
  it('keys.verifyKey, for a found key (with a name and meta) and for NOT_FOUND', async () => {
    const apiId = (await createApi({ name: 'envelope' }, ctx)).apiId;
    const { key } = await createKey({ apiId, byteLength: 16, enabled: true, recoverable: false, name: 'näme "q"', meta: { a: [1, 'b'] } }, ctx);
    expectSameEnvelope((requestId) => verifyCall(WS, { key, credits: { cost: 0 } }, NOW, { requestId }));
    expectSameEnvelope((requestId) => verifyCall(WS, { key: 'not_a_key_at_all' }, NOW, { requestId }));
  });

  it('ratelimits.limit, admitted and refused', () => {
    const ns = direct.transact(() => ensureNamespace(WS, 'envelope', NOW));
    // Cost 0 peeks (changes nothing); a cost above the limit is refused (consumes nothing).
    expectSameEnvelope((requestId) => limitCall(WS, { namespace: ns.name, identifier: 'user_1', limit: 10, duration: 60_000, cost: 0 }, NOW, { requestId }));
    expectSameEnvelope((requestId) => limitCall(WS, { namespace: ns.id, identifier: 'user_1', limit: 1, duration: 60_000, cost: 2 }, NOW, { requestId }));
  });

  it('ratelimits.multiLimit, admitted and refused', () => {
    const ns = direct.transact(() => ensureNamespace(WS, 'envelope-many', NOW));
    const item = (identifier: string, limit: number, cost: number) => ({ namespace: ns.name, identifier, limit, duration: 60_000, cost });
    expectSameEnvelope((requestId) => multiLimitCall(WS, [item('a', 10, 0), { ...item('b', 5, 0), namespace: ns.id }], NOW, { requestId }));
    expectSameEnvelope((requestId) => multiLimitCall(WS, [item('a', 10, 1), item('b', 1, 2)], NOW, { requestId }));
  });
});
