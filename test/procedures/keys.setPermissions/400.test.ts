// keys.setPermissions 400: ≤1000 slugs of 1–100 chars (empty list allowed).
import { describe, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call } from '../../helpers/server.js';
import { expect400 } from '../../helpers/keys.js';

const srv = inProcessServer();

describe('keys.setPermissions 400', () => {
  it.each([
    ['permissions missing', { keyId: 'key_abc' }, 'permissions'],
    ['1001 permissions', { keyId: 'key_abc', permissions: Array.from({ length: 1001 }, (_, i) => `p.${i}`) }, 'permissions'],
    ['a slug of 0 chars', { keyId: 'key_abc', permissions: [''] }, 'permissions'],
    ['a slug of 129 chars', { keyId: 'key_abc', permissions: ['p'.repeat(129)] }, 'permissions'],
    ['a slug with a comma', { keyId: 'key_abc', permissions: ['a,b'] }, 'permissions'],
    ['keyId 256 chars', { keyId: 'k'.repeat(256), permissions: [] }, 'keyId'],
  ])('%s → 400', async (_why, body, field) => {
    expect400(await call(srv(), 'keys.setPermissions', body), field);
  });
});
