import { transact } from '../../store/db.js';
import { saveIdentity } from '../../store/identities.js';
import type { IdentityRecord } from '../../store/records.js';
import type { Ctx } from '../context.js';
import { ratelimitDefs, type RatelimitInput } from '../keys/fields.js';
import { identityFor, identityMetaJson, identityView, type IdentityView } from './view.js';

export interface UpdateIdentityInput {
  identity: string;
  meta?: Record<string, unknown> | null;
  ratelimits?: RatelimitInput[];
}

/** Omitted fields stay; `meta: null` clears; `ratelimits` replaces the set (same names keep their ids). */
export function updateIdentity(input: UpdateIdentityInput, ctx: Ctx): IdentityView {
  const meta = input.meta === undefined || input.meta === null ? input.meta : identityMetaJson(input.meta);
  return transact(() => {
    const before = identityFor(ctx, input.identity, 'update_identity');
    const record: IdentityRecord = { ...before };
    if (meta === null) delete record.metaJson;
    else if (meta !== undefined) record.metaJson = meta;
    if (input.ratelimits !== undefined) record.ratelimits = ratelimitDefs(input.ratelimits, before.ratelimits, ctx.nowMs);
    saveIdentity(record);
    return identityView(record);
  });
}
