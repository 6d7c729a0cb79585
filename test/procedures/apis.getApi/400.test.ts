import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, expectError } from '../../helpers/server.js';

const srv = inProcessServer();

describe('apis.getApi 400', () => {
  it.each([
    ['missing apiId', {}],
    ['apiId too short', { apiId: 'ab' }],
    ['apiId too long', { apiId: 'a'.repeat(256) }],
    ['apiId with forbidden characters', { apiId: 'api-123/../x' }],
    ['apiId a number', { apiId: 123456789 }],
    ['apiId null', { apiId: null }],
    ['unknown field', { apiId: 'api_12345678', name: 'x' }],
  ])('%s → invalid_input', async (_why, body) => {
    const error = expectError(await call(srv(), 'apis.getApi', body), 400, 'invalid_input');
    expect(error.errors?.length).toBeGreaterThan(0);
    expect(error.detail + JSON.stringify(error.errors)).toMatch(/apiId|name/);
  });
});
