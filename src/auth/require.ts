import { ApiError } from '../errors/apiError.js';
import { neededPermissions, type Principal, type Resource } from './permissions.js';

/** Throws 403 insufficient_permissions naming what would have been enough. */
export function requirePermission(principal: Principal, resource: Resource, id: string | undefined, action: string): void {
  if (principal.can(resource, id, action)) return;
  const options = neededPermissions(resource, id, action);
  const detail = options.length === 1 ? `Missing permission: '${options[0]}'.` : `Missing one of these permissions: ${options.map((p) => `'${p}'`).join(' or ')}.`;
  throw new ApiError('insufficient_permissions', `The root key lacks the permission for this procedure. ${detail}`);
}

/**
 * 403 unless the root key may `action` some `resource` at all; checked before looking an item
 * up, so a root key without any such grant learns nothing about which ids exist.
 * `placeholder` (e.g. `<apiId>`, which no grant can match) makes the detail name both forms.
 */
export function requireSomewhere(principal: Principal, resource: Resource, placeholder: string, action: string): void {
  if (!principal.canSomewhere(resource, action)) requirePermission(principal, resource, placeholder, action);
}
