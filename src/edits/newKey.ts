// The shared body of keys.createKey and keys.migrateKeys: a new key record from the fields
// both take, checked (what JSON Schema cannot say) before any write, then written with its
// roles, permissions, identity and credits inside the caller's transaction.
import { invalidInput } from '../errors/errors.js';
import { ratelimitDefs, refillTuple, type RatelimitInput, type RefillInput } from '../fields/keys.js';
import { metaJson } from '../fields/meta.js';
import type { CreditsTuple } from '../engine/native.js';
import { upsertIdentity } from '../store/identities.js';
import { saveKey, writeCredits } from '../store/keys.js';
import { ensurePermissions, findRole, insertRole, requireRoles } from '../store/permissions.js';
import type { KeyRecord } from '../store/records.js';

export interface NewKeyFields {
  name?: string;
  externalId?: string;
  meta?: Record<string, unknown>;
  roles?: string[];
  permissions?: string[];
  expires?: number;
  credits?: { remaining: number | null; refill?: RefillInput };
  ratelimits?: RatelimitInput[];
  enabled: boolean;
}

/** What identifies the new key; the rest of the record comes from its fields. */
export interface NewKeyIdentity {
  id: string;
  apiId: string;
  workspaceId: string;
  /** base64 of the 32 bytes the record is stored under. */
  hash: string;
  start: string;
  byteLength: number;
  prefix?: string;
}

export interface NewKey {
  record: KeyRecord;
  credits: CreditsTuple | undefined;
  roles: readonly string[];
  permissions: readonly string[];
  externalId: string | undefined;
}

/** The record of a new key, checked; `location` is where its fields are in the body. */
export function draftKey(identity: NewKeyIdentity, fields: NewKeyFields, nowMs: number, location = 'body'): NewKey {
  const meta = fields.meta === undefined ? undefined : metaJson(fields.meta, `${location}.meta`);
  if (fields.credits?.remaining === null && fields.credits.refill !== undefined) {
    throw invalidInput(`${location}.credits.refill`, 'needs a limited balance: set credits.remaining to a number', 'set credits.remaining, or drop the refill');
  }
  const [refillAmount, refillDay] = refillTuple(fields.credits?.refill, `${location}.credits.refill`);
  const record: KeyRecord = {
    ...identity,
    enabled: fields.enabled,
    createdAtMs: nowMs,
    permissions: [],
    roleIds: [],
    ratelimits: ratelimitDefs(fields.ratelimits ?? [], [], nowMs, `${location}.ratelimits`),
  };
  if (fields.name !== undefined) record.name = fields.name;
  if (fields.expires !== undefined) record.expiresAtMs = fields.expires;
  if (meta !== undefined) record.metaJson = meta;
  const remaining = fields.credits?.remaining;
  return {
    record,
    credits: remaining === undefined || remaining === null ? undefined : [remaining, refillAmount, refillDay, nowMs],
    roles: fields.roles ?? [],
    permissions: fields.permissions ?? [],
    externalId: fields.externalId,
  };
}

/**
 * Writes the drafted key (inside the caller's transaction): its roles must exist
 * ('existing', createKey) or are found or created ('found-or-created', migrateKeys);
 * permissions and the identity are found or created.
 */
export function insertKey(draft: NewKey, roles: 'existing' | 'found-or-created', nowMs: number): KeyRecord {
  const record = draft.record;
  const ws = record.workspaceId;
  const found = roles === 'existing' ? requireRoles(ws, draft.roles) : draft.roles.map((name) => findRole(ws, name) ?? insertRole(ws, { name }, [], nowMs));
  record.roleIds = [...new Set(found.map((r) => r.id))];
  record.permissions = ensurePermissions(ws, draft.permissions, nowMs).records.map((p) => p.slug);
  if (draft.externalId !== undefined) {
    const identity = upsertIdentity(ws, draft.externalId, nowMs);
    record.identityId = identity.id;
    record.externalId = identity.externalId;
  }
  saveKey(record, undefined);
  if (draft.credits !== undefined) writeCredits(record.id, draft.credits);
  return record;
}
