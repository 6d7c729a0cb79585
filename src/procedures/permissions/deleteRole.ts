import { deleteRoleEverywhere } from '../../store/cascades.js';
import { transact } from '../../store/db.js';
import { idxGet } from '../../store/indexes.js';
import { IDX } from '../../store/records.js';
import type { Ctx } from '../context.js';
import { roleFor } from './getRole.js';

/** Removes the role from every key, then the role itself (its permissions stay), in one transaction. */
export function deleteRole(input: { role: string }, ctx: Ctx): Record<string, never> {
  const ws = ctx.principal.workspaceId;
  transact(() => deleteRoleEverywhere(roleFor(ctx, input.role), ctx.nowMs, (slug) => idxGet(IDX.permSlug(ws, slug))));
  return {};
}
