import { ApiError } from '../../errors/apiError.js';
import { findRole } from '../../store/permissions.js';
import type { RoleRecord } from '../../store/records.js';
import type { Ctx } from '../context.js';
import { roleView, type RoleView } from './view.js';

/** The role of this workspace with this id or name, or 404 role_not_found. */
export function roleFor(ctx: Ctx, idOrName: string): RoleRecord {
  const record = findRole(ctx.principal.workspaceId, idOrName);
  if (record === undefined) throw new ApiError('role_not_found', `The role '${idOrName}' (id or name) does not exist in this workspace.`);
  return record;
}

export function getRole(input: { role: string }, ctx: Ctx): RoleView {
  return roleView(roleFor(ctx, input.role));
}
