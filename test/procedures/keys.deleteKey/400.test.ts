// keys.deleteKey 400.
import { describe, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call } from '../../helpers/server.js';
import { expect400 } from '../../helpers/keys.js';

const srv = inProcessServer();

describe('keys.deleteKey 400', () => {
  it.each([
    ['keyId missing', {}, 'keyId'],
    ['keyId 2 chars', { keyId: 'ke' }, 'keyId'],
    ['keyId 256 chars', { keyId: 'k'.repeat(256) }, 'keyId'],
    ['permanent not a boolean', { keyId: 'key_abc', permanent: 1 }, 'permanent'],
    ['an unknown field', { keyId: 'key_abc', apiId: 'api_abc' }, 'apiId'],
  ])('%s → 400', async (_why, body, field) => {
    expect400(await call(srv(), 'keys.deleteKey', body), field);
  });
});
