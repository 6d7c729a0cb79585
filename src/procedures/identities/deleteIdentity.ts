import { deleteIdentityEverywhere } from '../../store/cascades.js';
import type { Ctx } from '../../request/context.js';
import { identityFor } from '../../lookups/identities.js';

/** Deletes the identity: its keys keep working without its meta and limits from the commit on; their links to it go in the background. */
export async function deleteIdentity(input: { identity: string }, ctx: Ctx): Promise<Record<string, never>> {
  const unlinking = await ctx.transact(() => deleteIdentityEverywhere(identityFor(ctx, input.identity, 'delete_identity')));
  void ctx.jobs.unlink(unlinking);
  return {};
}
