// keys.removePermissions 400.
import { describe, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call } from '../../helpers/server.js';
import { expect400 } from '../../helpers/keys.js';

const srv = inProcessServer();

describe('keys.removePermissions 400', () => {
  it.each([
    ['permissions missing', { keyId: 'key_abc' }, 'permissions'],
    ['permissions empty', { keyId: 'key_abc', permissions: [] }, 'permissions'],
    ['1001 permissions', { keyId: 'key_abc', permissions: Array.from({ length: 1001 }, (_, i) => `p.${i}`) }, 'permissions'],
    ['a slug of 129 chars', { keyId: 'key_abc', permissions: ['p'.repeat(129)] }, 'permissions'],
    ['a slug with a space', { keyId: 'key_abc', permissions: ['a b'] }, 'permissions'],
    ['keyId missing', { permissions: ['a'] }, 'keyId'],
  ])('%s → 400', async (_why, body, field) => {
    expect400(await call(srv(), 'keys.removePermissions', body), field);
  });
});
