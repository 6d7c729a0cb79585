import { describe, expect, it } from 'vitest';
import { inProcessServer } from '../../helpers/inProcess.js';
import { call, expectError } from '../../helpers/server.js';

const srv = inProcessServer();

describe('apis.createApi 400', () => {
  it.each([
    ['missing name', {}, 'name'],
    ['name too short', { name: 'ab' }, 'name'],
    ['empty name', { name: '' }, 'name'],
    ['name too long', { name: 'n'.repeat(257) }, 'name'],
    ['name a number', { name: 12345 }, 'name'],
    ['name null', { name: null }, 'name'],
    ['name an array', { name: ['abc'] }, 'name'],
    ['name an object', { name: { value: 'abc' } }, 'name'],
    ['unknown field', { name: 'abc', workspaceId: 'ws_x' }, 'workspaceId'],
    ['v1 field', { name: 'abc', async: true }, 'async'],
  ])('%s → invalid_input naming the field', async (_why, body, field) => {
    const error = expectError(await call(srv(), 'apis.createApi', body), 400, 'invalid_input');
    expect(error.title).toBe('Bad Request');
    expect(error.errors?.length).toBeGreaterThan(0);
    for (const e of error.errors ?? []) {
      expect(typeof e.location).toBe('string');
      expect(typeof e.message).toBe('string');
    }
    expect(error.errors?.some((e) => e.location.includes(field) || e.message.includes(field))).toBe(true);
    expect(error.detail).toContain(field);
  });

  it.each([
    ['an array', []],
    ['null', null],
    ['a string', 'abc'],
    ['a number', 3],
  ])('a body that is %s → invalid_input', async (_why, body) => {
    expectError(await call(srv(), 'apis.createApi', body), 400, 'invalid_input');
  });

  it('reports every problem at once', async () => {
    const error = expectError(await call(srv(), 'apis.createApi', { name: 1, a: 1, b: 2 }), 400, 'invalid_input');
    expect(error.errors?.length).toBeGreaterThanOrEqual(3);
  });

  it('length is counted in characters, not bytes', async () => {
    // 256 three-byte characters: within the limit.
    const ok = await call(srv(), 'apis.createApi', { name: '€'.repeat(256) });
    expect(ok.status).toBe(200);
    expectError(await call(srv(), 'apis.createApi', { name: '€'.repeat(257) }), 400, 'invalid_input');
  });
});
