import { deletePermissionEverywhere } from '../../store/cascades.js';
import { transact } from '../../store/db.js';
import { unlinkInBackground } from '../../workers/pool.js';
import type { Ctx } from '../context.js';
import { permissionFor } from './getPermission.js';

/** Deletes the permission, and takes it off every role: no key holds it from the commit on; the keys' links to it go in the background. */
export function deletePermission(input: { permission: string }, ctx: Ctx): Record<string, never> {
  const unlinking = transact(() => deletePermissionEverywhere(permissionFor(ctx, input.permission)));
  void unlinkInBackground(unlinking);
  return {};
}
