// keys.removeRoles 400.
import { describe, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call } from '../../helpers/server.js';
import { expect400 } from '../../helpers/keys.js';

const srv = inProcessServer();

describe('keys.removeRoles 400', () => {
  it.each([
    ['roles missing', { keyId: 'key_abc' }, 'roles'],
    ['roles empty', { keyId: 'key_abc', roles: [] }, 'roles'],
    ['101 roles', { keyId: 'key_abc', roles: Array.from({ length: 101 }, (_, i) => `r${i}`) }, 'roles'],
    ['a role of 129 chars', { keyId: 'key_abc', roles: ['r'.repeat(129)] }, 'roles'],
    ['keyId 256 chars', { keyId: 'k'.repeat(256), roles: ['a'] }, 'keyId'],
  ])('%s → 400', async (_why, body, field) => {
    expect400(await call(srv(), 'keys.removeRoles', body), field);
  });
});
