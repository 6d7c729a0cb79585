import { getRecord } from '../../store/db.js';
import { idxList } from '../../store/indexes.js';
import { paginate } from '../../store/paginate.js';
import { IDX, type PermissionRecord } from '../../store/records.js';
import type { Ctx, ListResult } from '../../request/context.js';
import { listTag, searchFilter } from '../../domain/search.js';
import { permissionView, type PermissionView } from '../../views/permissions.js';

export function listPermissions(input: { limit: number; cursor?: string; search?: string }, ctx: Ctx): ListResult<PermissionView> {
  const ws = ctx.principal.workspaceId;
  const matches = searchFilter(input.search);
  return paginate(listTag('permissions', ws, input.search), input.cursor, input.limit, (from, n) => idxList(IDX.wsPerm(ws), from, n), (id) => {
    const p = getRecord<PermissionRecord>('permissions', id);
    return p !== undefined && p.workspaceId === ws && matches(p.id, p.name, p.slug, p.description) ? permissionView(p) : undefined;
  });
}
