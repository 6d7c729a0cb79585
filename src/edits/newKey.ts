// The shared body of keys.createKey and keys.migrateKeys: a new key record from the fields
// both take, checked (what JSON Schema cannot say) before any write, then written with its
// roles, permissions, identity and credits inside the caller's transaction.
import { invalidInput } from '../errors/errors.js';
import { ratelimitDefs, refillTuple, type RatelimitInput, type RefillInput } from '../fields/keys.js';
import { metaJson } from '../fields/meta.js';
import type { CreditsTuple } from '../engine/native.js';
import { encode } from '../store/db.js';
import { planHoldIdentity, planIdentity, upsertIdentity, type PlannedIdentity } from '../store/identities.js';
import { putPlainNewKey, saveKey, writeCredits } from '../store/keys.js';
import { ensurePermissions, findRole, insertRole, requireRoles } from '../store/permissions.js';
import type { KeyRecord } from '../store/records.js';
import type { WritePlan } from '../store/writePlan.js';

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
  // Field by field: V8 (Node 20) builds a spread followed by more fields on a slow path, at
  // several µs a record (a tenth of a createKey).
  const record: KeyRecord = {
    id: identity.id,
    apiId: identity.apiId,
    workspaceId: identity.workspaceId,
    hash: identity.hash,
    start: identity.start,
    byteLength: identity.byteLength,
    enabled: fields.enabled,
    createdAtMs: nowMs,
    permissions: [],
    roleIds: [],
    ratelimits: ratelimitDefs(fields.ratelimits ?? [], [], nowMs, `${location}.ratelimits`),
  };
  if (identity.prefix !== undefined) record.prefix = identity.prefix;
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
  writeNewKey(draft);
  return record;
}

function writeNewKey(draft: NewKey): void {
  saveKey(draft.record, undefined);
  if (draft.credits !== undefined) writeCredits(draft.record.id, draft.credits);
}

/**
 * A drafted key encoded ahead of its transaction (keys.migrateKeys: encoding it, finding its
 * identity and writing down its writes then hold no writer), with the identity it was
 * drafted against. Only keys without roles or permissions (those are found or created in
 * the transaction) and whose externalId does not look like an identity id.
 */
export interface EarlyKey {
  draft: NewKey;
  identity: PlannedIdentity | undefined;
  encoded: Buffer;
}

/**
 * `draft` encoded early, or undefined when insertKey must write it. `identities`: the plans
 * of the call by externalId, one each, so that keys of one new externalId share it.
 */
export function encodeEarly(draft: NewKey, identities: Map<string, PlannedIdentity>, nowMs: number): EarlyKey | undefined {
  const externalId = draft.externalId;
  if (draft.roles.length > 0 || draft.permissions.length > 0 || externalId?.startsWith('id_') === true) return undefined;
  let identity: PlannedIdentity | undefined;
  if (externalId !== undefined) {
    identity = identities.get(externalId) ?? planIdentity(draft.record.workspaceId, externalId, nowMs);
    identities.set(externalId, identity);
    draft.record.identityId = identity.id;
    draft.record.externalId = identity.externalId;
  }
  return { draft, identity, encoded: encode(draft.record) };
}

/**
 * An early key's writes, as a group of `plan`: its identity still as planned (written if it
 * was to be created), then its rows and credits. The group's outcome GROUP.heldOtherwise:
 * the externalId changed since, and insertKey must write the draft.
 */
export function planEarlyKey(plan: WritePlan, early: EarlyKey): void {
  const { record, credits } = early.draft;
  if (early.identity !== undefined) planHoldIdentity(plan, record.workspaceId, early.identity);
  putPlainNewKey(record, early.encoded, plan);
  if (credits !== undefined) plan.credits(record.id, credits);
}
