import { getRecord } from '../../store/db.js';
import { idxList } from '../../store/indexes.js';
import { paginate } from '../../store/paginate.js';
import { IDX, type IdentityRecord } from '../../store/records.js';
import type { Ctx, ListResult } from '../../request/context.js';
import { listTag, searchFilter } from '../../domain/search.js';
import { requireIdentityAction } from '../../lookups/identities.js';
import { identityView, type IdentityView } from '../../views/identities.js';

/** Identities in id order; a root key with per-identity grants sees only those identities. */
export function listIdentities(input: { limit: number; cursor?: string; search?: string }, ctx: Ctx): ListResult<IdentityView> {
  requireIdentityAction(ctx, 'read_identity');
  const ws = ctx.principal.workspaceId;
  const matches = searchFilter(input.search);
  return paginate(listTag('identities', ws, input.search), input.cursor, input.limit, (from, n) => idxList(IDX.wsIdent(ws), from, n), (id) => {
    if (!ctx.principal.can('identities', id, 'read_identity')) return undefined;
    const identity = getRecord<IdentityRecord>('identities', id);
    return identity !== undefined && identity.workspaceId === ws && matches(identity.id, identity.externalId) ? identityView(identity) : undefined;
  });
}
