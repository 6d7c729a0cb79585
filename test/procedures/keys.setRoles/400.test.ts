// keys.setRoles 400: ≤100 roles, each 1–100 chars (an empty list is allowed).
import { describe, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call } from '../../helpers/server.js';
import { expect400 } from '../../helpers/keys.js';

const srv = inProcessServer();

describe('keys.setRoles 400', () => {
  it.each([
    ['roles missing', { keyId: 'key_abc' }, 'roles'],
    ['roles null', { keyId: 'key_abc', roles: null }, 'roles'],
    ['101 roles', { keyId: 'key_abc', roles: Array.from({ length: 101 }, (_, i) => `r${i}`) }, 'roles'],
    ['a role of 0 chars', { keyId: 'key_abc', roles: [''] }, 'roles'],
    ['a role of 129 chars', { keyId: 'key_abc', roles: ['r'.repeat(129)] }, 'roles'],
    ['keyId missing', { roles: [] }, 'keyId'],
  ])('%s → 400', async (_why, body, field) => {
    expect400(await call(srv(), 'keys.setRoles', body), field);
  });
});
