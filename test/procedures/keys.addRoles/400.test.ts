// keys.addRoles 400: roles 1–100 entries, each 1–100 chars.
import { describe, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call } from '../../helpers/server.js';
import { expect400 } from '../../helpers/keys.js';

const srv = inProcessServer();

describe('keys.addRoles 400', () => {
  it.each([
    ['roles missing', { keyId: 'key_abc' }, 'roles'],
    ['roles empty', { keyId: 'key_abc', roles: [] }, 'roles'],
    ['101 roles', { keyId: 'key_abc', roles: Array.from({ length: 101 }, (_, i) => `r${i}`) }, 'roles'],
    ['a role of 0 chars', { keyId: 'key_abc', roles: [''] }, 'roles'],
    ['a role of 129 chars', { keyId: 'key_abc', roles: ['r'.repeat(129)] }, 'roles'],
    ['roles a string', { keyId: 'key_abc', roles: 'admin' }, 'roles'],
    ['keyId missing', { roles: ['a'] }, 'keyId'],
    ['keyId 2 chars', { keyId: 'ke', roles: ['a'] }, 'keyId'],
    ['an unknown field', { keyId: 'key_abc', roles: ['a'], permissions: ['x'] }, 'permissions'],
  ])('%s → 400', async (_why, body, field) => {
    expect400(await call(srv(), 'keys.addRoles', body), field);
  });
});
