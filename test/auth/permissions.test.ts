// Pure grant syntax and matching (src/domain/grants.ts, src/auth/permissions.ts): no store, no server.
import { describe, expect, it } from 'vitest';
import { grantAllows, grantAllowsSomeId, neededPermissions, Principal } from '../../src/auth/permissions.js';
import { canonicalResource, isValidGrant, normalizeGrant } from '../../src/domain/grants.js';

const principal = (...grants: string[]): Principal => new Principal('ws_1', 'rk_1', grants.map(normalizeGrant));

describe('grantAllows', () => {
  it.each([
    ['*', 'apis', 'api_1', 'read_api', true],
    ['apis.*.read_api', 'apis', 'api_1', 'read_api', true],
    ['apis.*.read_api', 'apis', '*', 'read_api', true],
    ['apis.api_1.read_api', 'apis', 'api_1', 'read_api', true],
    ['apis.api_1.read_api', 'apis', 'api_2', 'read_api', false],
    ['apis.api_1.read_api', 'apis', '*', 'read_api', false],
    ['*.*.read_api', 'apis', 'api_9', 'read_api', true],
    ['*.*.read_api', 'apis', 'api_9', 'delete_api', false],
    ['apis.*.*', 'apis', 'api_9', 'delete_api', true],
    ['apis.*.*', 'ratelimits', 'x', 'limit', false],
    ['*.*.*', 'identities', 'x', 'read_identity', true],
    ['apis.*.read_api', 'apis', 'api_1', 'read_key', false],
    ['apis.*.read_api.extra', 'apis', 'api_1', 'read_api', false],
    ['apis.*', 'apis', 'api_1', 'read_api', false],
    ['apis', 'apis', 'api_1', 'read_api', false],
    ['', 'apis', 'api_1', 'read_api', false],
    ['apis.*.read', 'apis', 'api_1', 'read_api', false],
    ['apis.*.read_api_x', 'apis', 'api_1', 'read_api', false],
  ])('%s allows %s.%s.%s → %s', (grant, resource, id, action, expected) => {
    expect(grantAllows(grant, resource, id, action)).toBe(expected);
  });

  it('segments are compared exactly (no prefix or case folding)', () => {
    expect(grantAllows('APIS.*.read_api', 'apis', 'a', 'read_api')).toBe(false);
    expect(grantAllows('apis.api_1.read_api', 'apis', 'api_10', 'read_api')).toBe(false);
    expect(grantAllows('apis.a*.read_api', 'apis', 'ab', 'read_api')).toBe(false);
  });
});

describe('grantAllowsSomeId', () => {
  it('ignores the id segment but not the others', () => {
    expect(grantAllowsSomeId('apis.api_1.verify_key', 'apis', 'verify_key')).toBe(true);
    expect(grantAllowsSomeId('apis.*.verify_key', 'apis', 'verify_key')).toBe(true);
    expect(grantAllowsSomeId('*', 'apis', 'verify_key')).toBe(true);
    expect(grantAllowsSomeId('apis.api_1.read_key', 'apis', 'verify_key')).toBe(false);
    expect(grantAllowsSomeId('ratelimits.*.verify_key', 'apis', 'verify_key')).toBe(false);
    expect(grantAllowsSomeId('apis.x.verify_key.y', 'apis', 'verify_key')).toBe(false);
  });
});

describe('aliases', () => {
  it('maps Unkey resource names to the canonical ones', () => {
    expect(canonicalResource('api')).toBe('apis');
    expect(canonicalResource('ratelimit')).toBe('ratelimits');
    expect(canonicalResource('identity')).toBe('identities');
    expect(canonicalResource('apis')).toBe('apis');
    expect(canonicalResource('rbac')).toBe('rbac');
  });

  it('normalizeGrant rewrites only the resource segment', () => {
    expect(normalizeGrant('api.*.create_api')).toBe('apis.*.create_api');
    expect(normalizeGrant('ratelimit.ns_1.limit')).toBe('ratelimits.ns_1.limit');
    expect(normalizeGrant('identity.*.read_identity')).toBe('identities.*.read_identity');
    expect(normalizeGrant('apis.api.create_api')).toBe('apis.api.create_api');
    expect(normalizeGrant('*')).toBe('*');
    expect(normalizeGrant('*.*.read_api')).toBe('*.*.read_api');
  });

  it('an alias grant satisfies the canonical check', () => {
    expect(principal('api.*.create_api').can('apis', undefined, 'create_api')).toBe(true);
    expect(principal('ratelimit.*.limit').can('ratelimits', 'ns', 'limit')).toBe(true);
    expect(principal('identity.id_1.read_identity').can('identities', 'id_1', 'read_identity')).toBe(true);
  });
});

describe('isValidGrant', () => {
  it.each(['*', 'apis.*.read_api', 'api.api_123.create_key', '*.*.*', 'rbac.*.create_role', 'a-b.c_d.e'])('accepts %s', (g) => {
    expect(isValidGrant(g)).toBe(true);
  });
  it.each(['', '**', 'apis', 'apis.*', 'apis..read_api', 'apis.*.read_api.', '.apis.*.x', 'apis.*.read api', 'apis.*.read_api.x', 'apis/*/read', 'apis.*.réad'])('rejects %j', (g) => {
    expect(isValidGrant(g)).toBe(false);
  });
});

describe('Principal', () => {
  it('without an id only a * id grant allows', () => {
    expect(principal('apis.api_1.create_api').can('apis', undefined, 'create_api')).toBe(false);
    expect(principal('apis.*.create_api').can('apis', undefined, 'create_api')).toBe(true);
  });

  it('any one of several grants is enough', () => {
    const p = principal('apis.api_1.read_key', 'apis.api_2.read_api');
    expect(p.can('apis', 'api_1', 'read_key')).toBe(true);
    expect(p.can('apis', 'api_2', 'read_api')).toBe(true);
    expect(p.can('apis', 'api_1', 'read_api')).toBe(false);
    expect(p.canSomewhere('apis', 'read_api')).toBe(true);
    expect(p.canSomewhere('apis', 'delete_api')).toBe(false);
  });

  it('no grants allow nothing', () => {
    expect(principal().can('apis', 'a', 'read_api')).toBe(false);
    expect(principal().canSomewhere('apis', 'read_api')).toBe(false);
  });
});

describe('neededPermissions', () => {
  it('names the wildcard and the specific permission', () => {
    expect(neededPermissions('apis', undefined, 'create_api')).toEqual(['apis.*.create_api']);
    expect(neededPermissions('apis', '*', 'create_api')).toEqual(['apis.*.create_api']);
    expect(neededPermissions('apis', 'api_1', 'read_api')).toEqual(['apis.*.read_api', 'apis.api_1.read_api']);
  });
});
