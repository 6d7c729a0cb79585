import { invalidInput } from '../../errors/errors.js';
import { upsertIdentity } from '../../store/identities.js';
import { deleteCredits, readCredits, saveKey, writeCredits } from '../../store/keys.js';
import { ensurePermissions, requireRoles } from '../../store/permissions.js';
import type { KeyRecord } from '../../store/records.js';
import type { Ctx } from '../../request/context.js';
import { ratelimitDefs, refillTuple, type RatelimitInput, type RefillInput } from '../../fields/keys.js';
import { metaJson } from '../../fields/meta.js';
import { keyFor } from '../../lookups/keys.js';
import { keyView, type KeyView } from '../../views/keys.js';

/** Omitted = unchanged, null = cleared; lists replace. */
export interface UpdateKeyInput {
  keyId: string;
  name?: string | null;
  externalId?: string | null;
  meta?: Record<string, unknown> | null;
  expires?: number | null;
  credits?: { remaining?: number | null; refill?: RefillInput | null } | null;
  ratelimits?: RatelimitInput[];
  enabled?: boolean;
  roles?: string[];
  permissions?: string[];
}

function setOrClear<K extends keyof KeyRecord>(record: KeyRecord, field: K, value: KeyRecord[K] | null | undefined): void {
  if (value === undefined) return;
  if (value === null) delete record[field];
  else record[field] = value;
}

function applyCredits(keyId: string, credits: NonNullable<UpdateKeyInput['credits']> | null, nowMs: number): void {
  if (credits === null || credits.remaining === null) {
    if (credits !== null && credits.refill !== undefined && credits.refill !== null) {
      throw invalidInput('body.credits.refill', 'needs a limited balance: set credits.remaining to a number', 'set credits.remaining, or drop the refill');
    }
    deleteCredits(keyId);
    return;
  }
  if (credits.remaining === undefined && credits.refill === undefined) return; // `credits: {}` changes nothing
  const current = readCredits(keyId, nowMs);
  const remaining = credits.remaining ?? current?.[0];
  if (remaining === undefined) {
    throw invalidInput('body.credits.remaining', 'is required: the key has unlimited credits, so a refill needs a balance too', 'set credits.remaining');
  }
  const [amount, day] = credits.refill === undefined ? [current?.[1] ?? -1, current?.[2] ?? 0] : refillTuple(credits.refill);
  // The last-refill stamp: now when the balance is set, and when a refill is added to a key
  // that had none (its first refill is at the first boundary after this call, not at one
  // that passed before it); otherwise the stamp stays.
  const refillAdded = amount >= 0 && (current?.[1] ?? -1) < 0;
  writeCredits(keyId, [remaining, amount, day, credits.remaining === undefined && !refillAdded ? (current?.[3] ?? nowMs) : nowMs]);
}

export async function updateKey(input: UpdateKeyInput, ctx: Ctx): Promise<KeyView> {
  const ws = ctx.principal.workspaceId;
  const meta = input.meta === undefined || input.meta === null ? input.meta : metaJson(input.meta);
  return ctx.transact(() => {
    const before = keyFor(ctx, input.keyId, 'update_key');
    const key: KeyRecord = { ...before, updatedAtMs: ctx.nowMs };
    setOrClear(key, 'name', input.name);
    setOrClear(key, 'metaJson', meta);
    setOrClear(key, 'expiresAtMs', input.expires);
    if (input.enabled !== undefined) key.enabled = input.enabled;
    if (input.externalId === null) {
      delete key.identityId;
      delete key.externalId;
    } else if (input.externalId !== undefined) {
      const identity = upsertIdentity(ws, input.externalId, ctx.nowMs);
      key.identityId = identity.id;
      key.externalId = identity.externalId;
    }
    if (input.ratelimits !== undefined) key.ratelimits = ratelimitDefs(input.ratelimits, before.ratelimits, ctx.nowMs);
    if (input.roles !== undefined) key.roleIds = requireRoles(ws, input.roles).map((r) => r.id);
    if (input.permissions !== undefined) key.permissions = ensurePermissions(ws, input.permissions, ctx.nowMs).records.map((p) => p.slug);
    if (input.credits !== undefined) applyCredits(key.id, input.credits, ctx.nowMs);
    saveKey(key, before);
    return keyView(key, ctx.nowMs);
  });
}
