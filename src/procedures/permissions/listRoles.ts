import { getRecord } from '../../store/db.js';
import { idxList } from '../../store/indexes.js';
import { paginate } from '../../store/paginate.js';
import { IDX, type RoleRecord } from '../../store/records.js';
import type { Ctx, ListResult } from '../../request/context.js';
import { listTag, searchFilter } from '../../domain/search.js';
import { roleView, type RoleView } from '../../views/permissions.js';

export function listRoles(input: { limit: number; cursor?: string; search?: string }, ctx: Ctx): ListResult<RoleView> {
  const ws = ctx.principal.workspaceId;
  const matches = searchFilter(input.search);
  return paginate(listTag('roles', ws, input.search), input.cursor, input.limit, (from, n) => idxList(IDX.wsRole(ws), from, n), (id) => {
    const role = getRecord<RoleRecord>('roles', id);
    return role !== undefined && role.workspaceId === ws && matches(role.id, role.name, role.description) ? roleView(role) : undefined;
  });
}
