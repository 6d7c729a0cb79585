// keys.rerollKey 400: expiration required, 0–4102444800000.
import { describe, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call } from '../../helpers/server.js';
import { expect400 } from '../../helpers/keys.js';

const srv = inProcessServer();

describe('keys.rerollKey 400', () => {
  it.each([
    ['expiration missing', { keyId: 'key_abc' }, 'expiration'],
    ['expiration -1', { keyId: 'key_abc', expiration: -1 }, 'expiration'],
    ['expiration 4102444800001', { keyId: 'key_abc', expiration: 4102444800001 }, 'expiration'],
    ['expiration fractional', { keyId: 'key_abc', expiration: 1.5 }, 'expiration'],
    ['keyId missing', { expiration: 0 }, 'keyId'],
    ['keyId 2 chars', { keyId: 'ke', expiration: 0 }, 'keyId'],
    ['an unknown field', { keyId: 'key_abc', expiration: 0, prefix: 'x' }, 'prefix'],
  ])('%s → 400', async (_why, body, field) => {
    expect400(await call(srv(), 'keys.rerollKey', body), field);
  });
});
