import { deleteRoleEverywhere } from '../../store/cascades.js';
import { transact } from '../../store/db.js';
import { unlinkInBackground } from '../../workers/pool.js';
import { idxGet } from '../../store/indexes.js';
import { IDX } from '../../store/records.js';
import type { Ctx } from '../context.js';
import { roleFor } from './getRole.js';

/** Deletes the role (its permissions stay): no key holds it from the commit on; the keys' links to it go in the background. */
export function deleteRole(input: { role: string }, ctx: Ctx): Record<string, never> {
  const ws = ctx.principal.workspaceId;
  const unlinking = transact(() => deleteRoleEverywhere(roleFor(ctx, input.role), (slug) => idxGet(IDX.permSlug(ws, slug))));
  void unlinkInBackground(unlinking);
  return {};
}
