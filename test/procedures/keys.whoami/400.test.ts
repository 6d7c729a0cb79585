// keys.whoami 400: key bounds (1–512), unknown fields.
import { describe, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call } from '../../helpers/server.js';
import { expect400 } from '../../helpers/keys.js';

const srv = inProcessServer();

describe('keys.whoami 400', () => {
  it.each([
    ['key missing', {}, 'key'],
    ['key empty', { key: '' }, 'key'],
    ['key 513 chars', { key: 'k'.repeat(513) }, 'key'],
    ['key not a string', { key: 5 }, 'key'],
    ['keyId instead of key', { keyId: 'key_abc' }, 'keyId'],
  ])('%s → 400', async (_why, body, field) => {
    expect400(await call(srv(), 'keys.whoami', body), field);
  });
});
