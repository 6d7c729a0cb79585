// An identity as the identities namespace returns it (Unkey's Identity), and the lookup
// every id-taking identities procedure shares.
import { requirePermission, requireSomewhere } from '../../auth/require.js';
import { ApiError } from '../../errors/apiError.js';
import { MAX_IDENTITY_META_BYTES } from '../../schemas/identities.js';
import { findIdentity } from '../../store/identities.js';
import type { IdentityRecord } from '../../store/records.js';
import type { Ctx } from '../context.js';
import { metaJson } from '../keys/fields.js';
import { ratelimitView, type RatelimitView } from '../keys/view.js';

export interface IdentityView {
  id: string;
  externalId: string;
  meta?: Record<string, unknown>;
  ratelimits?: RatelimitView[];
}

export function identityView(identity: IdentityRecord): IdentityView {
  const view: IdentityView = { id: identity.id, externalId: identity.externalId };
  if (identity.metaJson !== undefined) view.meta = JSON.parse(identity.metaJson) as Record<string, unknown>;
  if (identity.ratelimits.length > 0) view.ratelimits = identity.ratelimits.map(ratelimitView);
  return view;
}

/** meta → JSON text, at most 1 MiB. */
export function identityMetaJson(meta: Record<string, unknown>): string {
  return metaJson(meta, 'body.meta', MAX_IDENTITY_META_BYTES);
}

/** The root key may `action` some identities (403 before any lookup otherwise). */
export function requireIdentityAction(ctx: Ctx, action: string): void {
  requireSomewhere(ctx.principal, 'identities', '<identityId>', action);
}

/** The identity (by id or externalId) of this workspace, with `action` on it required of the root key. */
export function identityFor(ctx: Ctx, idOrExternalId: string, action: string): IdentityRecord {
  requireIdentityAction(ctx, action);
  const identity = findIdentity(ctx.principal.workspaceId, idOrExternalId);
  if (identity === undefined) throw new ApiError('identity_not_found', `The identity '${idOrExternalId}' (id or externalId) does not exist in this workspace.`);
  requirePermission(ctx.principal, 'identities', identity.id, action);
  return identity;
}
