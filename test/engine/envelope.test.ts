// The success envelope is written in two places: src/rpc/envelope.ts successBody, and the
// native hot calls when given the request id (native/src/hot.rs envelope_head). This is the
// golden test that keeps the two byte-for-byte equal.
import { describe, expect, it } from 'vitest';
import { tempStore } from '../helpers/tempStore.js';
import { Principal } from '../../src/auth/permissions.js';
import { newRequestId } from '../../src/rpc/requestId.js';
import { RawJson } from '../../src/domain/rawJson.js';
import { engine, limiter } from '../../src/engine/native.js';
import { createApi } from '../../src/procedures/apis/createApi.js';
import { createKey } from '../../src/procedures/keys/createKey.js';
import { successBody } from '../../src/rpc/envelope.js';
import { ensureNamespace } from '../../src/store/ratelimits.js';

const WS = 'ws_envelope_test';
const NOW = Date.UTC(2026, 0, 15, 12);

tempStore('keyward-envelope-');

const ctx = { principal: new Principal(WS, 'rk_test', ['*']), nowMs: NOW, requestId: 'req_test', vaultKey: undefined };

/** The native answer with and without a request id: the same flag, and the envelope successBody builds. */
function expectSameEnvelope(call: (requestId?: string) => string): void {
  const requestId = newRequestId();
  const bare = call();
  const whole = call(requestId);
  expect(whole[0]).toBe(bare[0]);
  expect(whole.slice(1)).toBe(successBody(requestId, new RawJson(bare.slice(1))));
  expect(JSON.parse(whole.slice(1))).toEqual({ meta: { requestId }, data: JSON.parse(bare.slice(1)) });
}

describe('native success envelope = successBody', () => {
  it('keys.verifyKey, for a found key (with a name and meta) and for NOT_FOUND', () => {
    const apiId = createApi({ name: 'envelope' }, ctx).apiId;
    const { key } = createKey({ apiId, byteLength: 16, enabled: true, recoverable: false, name: 'näme "q"', meta: { a: [1, 'b'] } }, ctx);
    expectSameEnvelope((id) => engine.verifyKey(WS, '*', key, 0, null, '', NOW, id));
    expectSameEnvelope((id) => engine.verifyKey(WS, '*', 'not_a_key_at_all', -1, null, '', NOW, id));
  });

  it('ratelimits.limit, admitted and refused', () => {
    const ns = ensureNamespace(WS, 'envelope', NOW).id;
    expectSameEnvelope((id) => limiter.limit(ns, 'user_1', 10, 60_000, 0, NOW, id));
    expectSameEnvelope((id) => limiter.limit(ns, 'user_1', 0, 60_000, 1, NOW, id));
  });
});
