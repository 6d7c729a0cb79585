import { deleteIdentityEverywhere } from '../../store/cascades.js';
import { transact } from '../../store/db.js';
import type { Ctx } from '../context.js';
import { identityFor } from './view.js';

/** Unlinks the identity from its keys (they keep working without its meta and limits), then deletes it. */
export function deleteIdentity(input: { identity: string }, ctx: Ctx): Record<string, never> {
  transact(() => deleteIdentityEverywhere(identityFor(ctx, input.identity, 'delete_identity'), ctx.nowMs));
  return {};
}
