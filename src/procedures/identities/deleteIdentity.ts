import { deleteIdentityEverywhere } from '../../store/cascades.js';
import { transact } from '../../store/db.js';
import { unlinkInBackground } from '../../workers/pool.js';
import type { Ctx } from '../context.js';
import { identityFor } from './view.js';

/** Deletes the identity: its keys keep working without its meta and limits from the commit on; their links to it go in the background. */
export function deleteIdentity(input: { identity: string }, ctx: Ctx): Record<string, never> {
  const unlinking = transact(() => deleteIdentityEverywhere(identityFor(ctx, input.identity, 'delete_identity')));
  void unlinkInBackground(unlinking);
  return {};
}
