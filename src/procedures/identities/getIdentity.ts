import type { Ctx } from '../../request/context.js';
import { identityFor } from '../../lookups/identities.js';
import { identityView, type IdentityView } from '../../views/identities.js';

export function getIdentity(input: { identity: string }, ctx: Ctx): IdentityView {
  return identityView(identityFor(ctx, input.identity, 'read_identity'));
}
