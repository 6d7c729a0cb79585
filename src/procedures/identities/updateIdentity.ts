import { saveIdentity } from '../../store/identities.js';
import type { IdentityRecord } from '../../store/records.js';
import type { Ctx } from '../../request/context.js';
import { ratelimitDefs, type RatelimitInput } from '../../fields/keys.js';
import { identityMetaJson } from '../../fields/meta.js';
import { identityFor } from '../../lookups/identities.js';
import { identityView, type IdentityView } from '../../views/identities.js';

export interface UpdateIdentityInput {
  identity: string;
  meta?: Record<string, unknown> | null;
  ratelimits?: RatelimitInput[];
}

/** Omitted fields stay; `meta: null` clears; `ratelimits` replaces the set (same names keep their ids). */
export async function updateIdentity(input: UpdateIdentityInput, ctx: Ctx): Promise<IdentityView> {
  const meta = input.meta === undefined || input.meta === null ? input.meta : identityMetaJson(input.meta);
  return ctx.transact(() => {
    const before = identityFor(ctx, input.identity, 'update_identity');
    const record: IdentityRecord = { ...before };
    if (meta === null) delete record.metaJson;
    else if (meta !== undefined) record.metaJson = meta;
    if (input.ratelimits !== undefined) record.ratelimits = ratelimitDefs(input.ratelimits, before.ratelimits, ctx.nowMs);
    saveIdentity(record);
    return identityView(record);
  });
}
