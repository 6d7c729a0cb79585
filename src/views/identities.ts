// An identity as the identities namespace returns it (Unkey's Identity).
import type { IdentityRecord } from '../store/records.js';
import { ratelimitView, type RatelimitView } from './keys.js';

export interface IdentityView {
  id: string;
  externalId: string;
  meta?: Record<string, unknown>;
  ratelimits?: RatelimitView[];
}

export function identityView(identity: IdentityRecord): IdentityView {
  const view: IdentityView = { id: identity.id, externalId: identity.externalId };
  if (identity.metaJson !== undefined) view.meta = JSON.parse(identity.metaJson) as Record<string, unknown>;
  if (identity.ratelimits.length > 0) view.ratelimits = identity.ratelimits.map(ratelimitView);
  return view;
}
