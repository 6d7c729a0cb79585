import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, expectError, expectOk, rootKeyWith } from '../../helpers/server.js';

const srv = inProcessServer();

describe('identities.listIdentities 403', () => {
  it('without any read_identity grant → 403 naming it; with it → 200', async () => {
    const denied = await rootKeyWith(srv(), ['identities.*.create_identity']);
    const error = expectError(await call(srv(), 'identities.listIdentities', {}, { rootKey: denied.key }), 403, 'insufficient_permissions');
    expect(error.detail).toContain('identities.*.read_identity');
    const allowed = await rootKeyWith(srv(), ['identities.*.read_identity']);
    expectOk(await call(srv(), 'identities.listIdentities', {}, { rootKey: allowed.key }));
  });
});
