import { findApi, apiKeyIds } from '../../store/apis.js';
import { getKeyRecord } from '../../store/keys.js';
import { paginate, type IdSource } from '../../store/paginate.js';
import { findIdentity } from '../../store/identities.js';
import { idxList } from '../../store/indexes.js';
import { IDX } from '../../store/records.js';
import type { Ctx, ListResult } from '../../request/context.js';
import { keyView, type KeyView } from '../../views/keys.js';
import { apiNotFound } from '../../errors/errors.js';
import { decryptPlaintext } from '../../lookups/keys.js';

export interface ListKeysInput {
  apiId: string;
  limit: number;
  cursor?: string;
  externalId?: string;
  decrypt: boolean;
}

export function listKeys(input: ListKeysInput, ctx: Ctx): ListResult<KeyView> {
  if (findApi(ctx.principal.workspaceId, input.apiId) === undefined) throw apiNotFound(input.apiId);
  const reveal = input.decrypt ? decryptPlaintext(ctx, input.apiId) : undefined;
  // With an externalId filter, walk that identity's keys (also in key-id order) instead.
  let source: IdSource = (from, n) => apiKeyIds(input.apiId, from, n);
  if (input.externalId !== undefined) {
    const identity = findIdentity(ctx.principal.workspaceId, input.externalId);
    if (identity === undefined) return { items: [], cursor: undefined, hasMore: false };
    source = (from, n) => idxList(IDX.identKey(identity.id), from, n);
  }
  return paginate(`keys:${input.apiId}:${input.externalId ?? ''}`, input.cursor, input.limit, source, (keyId) => {
    const record = getKeyRecord(keyId);
    if (record === undefined || record.apiId !== input.apiId) return undefined;
    const view = keyView(record, ctx.nowMs);
    const plaintext = reveal?.(record);
    if (plaintext !== undefined) view.plaintext = plaintext;
    return view;
  });
}
