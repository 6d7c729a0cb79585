import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, createApi, expectError, rootKeyWith } from '../../helpers/server.js';

const srv = inProcessServer();

describe('apis.listKeys 403', () => {
  it.each([
    ['only read_key', ['apis.*.read_key'], 'read_api'],
    ['only read_api', ['apis.*.read_api'], 'read_key'],
    ['read_key for another API', ['apis.*.read_api', 'apis.api_someother1.read_key'], 'read_key'],
    ['nothing relevant', ['apis.*.create_api'], 'read_'],
  ])('%s → 403 naming the missing %s', async (_why, grants, missing) => {
    const apiId = await createApi(srv());
    const { key } = await rootKeyWith(srv(), grants);
    const error = expectError(await call(srv(), 'apis.listKeys', { apiId }, { rootKey: key }), 403, 'insufficient_permissions');
    expect(error.title).toBe('Forbidden');
    expect(error.detail).toContain(missing);
  });

  it('decrypt:true without decrypt_key → 403 naming it', async () => {
    const apiId = await createApi(srv());
    const { key } = await rootKeyWith(srv(), ['apis.*.read_key', 'apis.*.read_api']);
    const error = expectError(await call(srv(), 'apis.listKeys', { apiId, decrypt: true }, { rootKey: key }), 403, 'insufficient_permissions');
    expect(error.detail).toContain('decrypt_key');
  });

  it('permissions are checked before existence', async () => {
    const { key } = await rootKeyWith(srv(), ['apis.*.read_key']);
    expectError(await call(srv(), 'apis.listKeys', { apiId: 'api_doesnotexist' }, { rootKey: key }), 403, 'insufficient_permissions');
  });
});
