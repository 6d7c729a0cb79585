import { transact } from '../../store/db.js';
import { insertPermission } from '../../store/permissions.js';
import type { Ctx } from '../context.js';
import { permissionView, type PermissionView } from './view.js';

export function createPermission(input: { name: string; slug: string; description?: string }, ctx: Ctx): PermissionView & { permissionId: string } {
  const record = transact(() => insertPermission(ctx.principal.workspaceId, input, ctx.nowMs));
  return { permissionId: record.id, ...permissionView(record) };
}
