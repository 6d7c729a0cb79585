import { idxList } from '../../store/indexes.js';
import { paginate } from '../../store/paginate.js';
import { overrideById } from '../../store/ratelimits.js';
import { IDX } from '../../store/records.js';
import type { Ctx, ListResult } from '../../request/context.js';
import type { OverrideView } from '../../views/ratelimits.js';
import { existingNamespace } from '../../lookups/namespaces.js';

/** Items are getOverride's view plus `namespace` (the namespace's name), a field the spec names for listed overrides. */
export function listOverrides(input: { namespace: string; cursor?: string; limit: number }, ctx: Ctx): ListResult<OverrideView & { namespace: string }> {
  const ns = existingNamespace(ctx, input.namespace, 'read_override');
  return paginate(`overrides:${ns.id}`, input.cursor, input.limit, (from, n) => idxList(IDX.nsOverrides(ns.id), from, n), (id) => {
    const o = overrideById(ns, id);
    return o === undefined ? undefined : { overrideId: o.id, namespace: ns.name, identifier: o.identifier, limit: o.limit, duration: o.durationMs };
  });
}
