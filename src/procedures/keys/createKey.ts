import { requirePermission } from '../../auth/require.js';
import { newId } from '../../domain/ids.js';
import { generateKey } from '../../domain/keyMaterial.js';
import { seal } from '../../domain/vault.js';
import { invalidInput } from '../../errors/errors.js';
import { findApi } from '../../store/apis.js';
import { upsertIdentity } from '../../store/identities.js';
import { keyHashBytes, saveKey, writeCredits } from '../../store/keys.js';
import { ensurePermissions, requireRoles } from '../../store/permissions.js';
import type { KeyRecord } from '../../store/records.js';
import { apiNotFound } from '../../errors/errors.js';
import type { Ctx } from '../../request/context.js';
import { ratelimitDefs, refillTuple, type RatelimitInput, type RefillInput } from '../../fields/keys.js';
import { metaJson } from '../../fields/meta.js';
import { vaultMissing } from '../../errors/errors.js';

export interface CreateKeyInput {
  apiId: string;
  prefix?: string;
  name?: string;
  byteLength: number;
  externalId?: string;
  meta?: Record<string, unknown>;
  roles?: string[];
  permissions?: string[];
  expires?: number;
  credits?: { remaining: number | null; refill?: RefillInput };
  ratelimits?: RatelimitInput[];
  enabled: boolean;
  recoverable: boolean;
}

export async function createKey(input: CreateKeyInput, ctx: Ctx): Promise<{ keyId: string; key: string }> {
  const ws = ctx.principal.workspaceId;
  if (input.recoverable) {
    requirePermission(ctx.principal, 'apis', input.apiId, 'encrypt_key');
    if (ctx.vaultKey === undefined) throw vaultMissing();
  }
  const meta = input.meta === undefined ? undefined : metaJson(input.meta);
  if (input.credits?.remaining === null && input.credits.refill !== undefined) {
    throw invalidInput('body.credits.refill', 'needs a limited balance: set credits.remaining to a number', 'set credits.remaining, or drop the refill');
  }
  const [refillAmount, refillDay] = refillTuple(input.credits?.refill);
  const { key, start } = generateKey(input.prefix, input.byteLength);
  const keyId = newId('key', ctx.nowMs);
  const record: KeyRecord = {
    id: keyId,
    apiId: input.apiId,
    workspaceId: ws,
    hash: keyHashBytes(key).toString('base64'),
    start,
    byteLength: input.byteLength,
    enabled: input.enabled,
    createdAtMs: ctx.nowMs,
    permissions: [],
    roleIds: [],
    ratelimits: ratelimitDefs(input.ratelimits ?? [], [], ctx.nowMs),
  };
  if (input.prefix !== undefined) record.prefix = input.prefix;
  if (input.name !== undefined) record.name = input.name;
  if (input.expires !== undefined) record.expiresAtMs = input.expires;
  if (meta !== undefined) record.metaJson = meta;
  if (input.recoverable && ctx.vaultKey !== undefined) record.vault = seal(ctx.vaultKey, keyId, key);
  await ctx.transact(() => {
    if (findApi(ws, input.apiId) === undefined) throw apiNotFound(input.apiId);
    record.roleIds = requireRoles(ws, input.roles ?? []).map((r) => r.id);
    record.permissions = ensurePermissions(ws, input.permissions ?? [], ctx.nowMs).records.map((p) => p.slug);
    if (input.externalId !== undefined) {
      const identity = upsertIdentity(ws, input.externalId, ctx.nowMs);
      record.identityId = identity.id;
      record.externalId = identity.externalId;
    }
    saveKey(record, undefined);
    if (input.credits !== undefined && input.credits.remaining !== null) writeCredits(keyId, [input.credits.remaining, refillAmount, refillDay, ctx.nowMs]);
  });
  return { keyId, key };
}
