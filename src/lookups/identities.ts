// An identity of the root key's workspace (by id or externalId), looked up with the
// permission the procedure needs on it.
import { requirePermission, requireSomewhere } from '../auth/require.js';
import { identityNotFound } from '../errors/errors.js';
import type { Ctx } from '../request/context.js';
import { findIdentity } from '../store/identities.js';
import type { IdentityRecord } from '../store/records.js';

/** The root key may `action` some identities (403 before any lookup otherwise). */
export function requireIdentityAction(ctx: Ctx, action: string): void {
  requireSomewhere(ctx.principal, 'identities', '<identityId>', action);
}

/** The identity (by id or externalId) of this workspace, with `action` on it required of the root key. */
export function identityFor(ctx: Ctx, idOrExternalId: string, action: string): IdentityRecord {
  requireIdentityAction(ctx, action);
  const identity = findIdentity(ctx.principal.workspaceId, idOrExternalId);
  if (identity === undefined) throw identityNotFound(idOrExternalId);
  requirePermission(ctx.principal, 'identities', identity.id, action);
  return identity;
}
