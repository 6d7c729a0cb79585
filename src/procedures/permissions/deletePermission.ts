import { deletePermissionEverywhere } from '../../store/cascades.js';
import { transact } from '../../store/db.js';
import type { Ctx } from '../context.js';
import { permissionFor } from './getPermission.js';

/** Removes the permission from every key and role, then the permission itself, in one transaction. */
export function deletePermission(input: { permission: string }, ctx: Ctx): Record<string, never> {
  transact(() => deletePermissionEverywhere(permissionFor(ctx, input.permission), ctx.nowMs));
  return {};
}
