// keys.getKey 400: keyId bounds and shape, unknown fields.
import { describe, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call } from '../../helpers/server.js';
import { expect400 } from '../../helpers/keys.js';

const srv = inProcessServer();

describe('keys.getKey 400', () => {
  it.each([
    ['keyId missing', {}, 'keyId'],
    ['keyId 2 chars', { keyId: 'ke' }, 'keyId'],
    ['keyId 256 chars', { keyId: 'k'.repeat(256) }, 'keyId'],
    ['keyId with a dash', { keyId: 'key-abc' }, 'keyId'],
    ['keyId not a string', { keyId: 12345 }, 'keyId'],
    ['decrypt not a boolean', { keyId: 'key_abc', decrypt: 'yes' }, 'decrypt'],
    ['an unknown field', { keyId: 'key_abc', apiId: 'api_x' }, 'apiId'],
  ])('%s → 400', async (_why, body, field) => {
    expect400(await call(srv(), 'keys.getKey', body), field);
  });
});
