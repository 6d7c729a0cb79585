// A key as keys.getKey, keys.whoami, keys.updateKey and apis.listKeys return it: Unkey's
// KeyResponseData plus a top-level externalId. Empty lists and unset fields are omitted.
import { getRecord } from '../store/db.js';
import { readCredits } from '../store/keys.js';
import { withoutGone } from '../store/gone.js';
import type { IdentityRecord, KeyRecord, RatelimitDef, RoleRecord } from '../store/records.js';

export interface RatelimitView {
  id: string;
  name: string;
  limit: number;
  duration: number;
  autoApply: boolean;
}

export interface CreditsView {
  remaining: number | null;
  refill?: { interval: 'daily' | 'monthly'; amount: number; refillDay?: number };
}

export interface KeyView {
  keyId: string;
  start: string;
  enabled: boolean;
  createdAt: number;
  name?: string;
  externalId?: string;
  meta?: Record<string, unknown>;
  updatedAt?: number;
  expires?: number;
  permissions?: string[];
  roles?: string[];
  credits?: CreditsView;
  identity?: { id: string; externalId: string; meta?: Record<string, unknown>; ratelimits?: RatelimitView[] };
  ratelimits?: RatelimitView[];
  plaintext?: string;
}

export function ratelimitView(r: RatelimitDef): RatelimitView {
  return { id: r.id, name: r.name, limit: r.limit, duration: r.durationMs, autoApply: r.autoApply };
}

export function creditsView(keyId: string, nowMs: number): CreditsView | undefined {
  const c = readCredits(keyId, nowMs);
  if (c === undefined) return undefined;
  const [remaining, amount, day] = c;
  const view: CreditsView = { remaining };
  if (amount >= 0) view.refill = day === 0 ? { interval: 'daily', amount } : { interval: 'monthly', amount, refillDay: day };
  return view;
}

export function keyView(key: KeyRecord, nowMs: number): KeyView {
  const view: KeyView = { keyId: key.id, start: key.start, enabled: key.enabled, createdAt: key.createdAtMs };
  if (key.name !== undefined) view.name = key.name;
  if (key.metaJson !== undefined) view.meta = JSON.parse(key.metaJson) as Record<string, unknown>;
  if (key.updatedAtMs !== undefined) view.updatedAt = key.updatedAtMs;
  if (key.expiresAtMs !== undefined) view.expires = key.expiresAtMs;
  const roles = key.roleIds.map((id) => getRecord<RoleRecord>('roles', id)).filter((r): r is RoleRecord => r !== undefined);
  const permissions = [...new Set([...withoutGone(key.workspaceId, key.permissions), ...roles.flatMap((r) => r.permissions)])];
  if (permissions.length > 0) view.permissions = permissions;
  if (roles.length > 0) view.roles = roles.map((r) => r.name);
  const credits = creditsView(key.id, nowMs);
  if (credits !== undefined) view.credits = credits;
  if (key.identityId !== undefined) {
    const identity = getRecord<IdentityRecord>('identities', key.identityId);
    // A deleted identity counts nowhere from its deletion on, though its keys are unlinked
    // in the background (store/cascades.ts): the key shows no externalId then.
    if (identity !== undefined) {
      view.externalId = identity.externalId;
      view.identity = { id: identity.id, externalId: identity.externalId };
      if (identity.metaJson !== undefined) view.identity.meta = JSON.parse(identity.metaJson) as Record<string, unknown>;
      if (identity.ratelimits.length > 0) view.identity.ratelimits = identity.ratelimits.map(ratelimitView);
    }
  }
  if (key.ratelimits.length > 0) view.ratelimits = key.ratelimits.map(ratelimitView);
  return view;
}
