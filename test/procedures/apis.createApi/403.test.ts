import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, expectError, rootKeyWith } from '../../helpers/server.js';

const srv = inProcessServer();

describe('apis.createApi 403', () => {
  it.each([
    ['read only', ['apis.*.read_api']],
    ['delete only', ['apis.*.delete_api']],
    ['create for one id only', ['apis.api_123456789.create_api']],
    ['another resource', ['ratelimits.*.create_api']],
    ['a similar action', ['apis.*.create_key']],
  ])('%s → 403 naming apis.*.create_api', async (_why, grants) => {
    const { key } = await rootKeyWith(srv(), grants);
    const res = await call(srv(), 'apis.createApi', { name: 'forbidden' }, { rootKey: key });
    const error = expectError(res, 403, 'insufficient_permissions');
    expect(error.type).toMatch(/\/authorization\/insufficient_permissions$/);
    expect(error.title).toBe('Forbidden');
    expect(error.detail).toContain('apis.*.create_api');
  });
});
