import type { Ctx } from '../context.js';
import { identityFor, identityView, type IdentityView } from './view.js';

export function getIdentity(input: { identity: string }, ctx: Ctx): IdentityView {
  return identityView(identityFor(ctx, input.identity, 'read_identity'));
}
