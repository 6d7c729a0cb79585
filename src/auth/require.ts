import { insufficientPermissions } from '../errors/errors.js';
import type { Resource } from '../domain/grants.js';
import { neededPermissions, type Principal } from './permissions.js';

/** Throws 403 insufficient_permissions naming what would have been enough. */
export function requirePermission(principal: Principal, resource: Resource, id: string | undefined, action: string): void {
  if (principal.can(resource, id, action)) return;
  throw insufficientPermissions(neededPermissions(resource, id, action));
}

/**
 * 403 unless the root key may `action` some `resource` at all; checked before looking an item
 * up, so a root key without any such grant learns nothing about which ids exist.
 * `placeholder` (e.g. `<apiId>`, which no grant can match) makes the detail name both forms.
 */
export function requireSomewhere(principal: Principal, resource: Resource, placeholder: string, action: string): void {
  if (!principal.canSomewhere(resource, action)) requirePermission(principal, resource, placeholder, action);
}
