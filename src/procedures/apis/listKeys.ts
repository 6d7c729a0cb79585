import { decodeCursor, encodeCursor } from '../../domain/cursor.js';
import { keyView, type KeyView } from '../../domain/keyView.js';
import { findApi, pageApiKeyIds } from '../../store/apis.js';
import { getRecord } from '../../store/db.js';
import type { KeyRecordBase } from '../../store/records.js';
import type { Ctx, ListResult } from '../context.js';
import { apiNotFound } from './getApi.js';

export interface ListKeysInput {
  apiId: string;
  limit: number;
  cursor?: string;
  externalId?: string;
  decrypt: boolean;
}

const PAGE_SCAN_FACTOR = 4;

export function listKeys(input: ListKeysInput, ctx: Ctx): ListResult<KeyView> {
  if (findApi(ctx.principal.workspaceId, input.apiId) === undefined) throw apiNotFound(input.apiId);
  const list = `keys:${input.apiId}`;
  let from = decodeCursor(list, input.cursor);
  const items: KeyView[] = [];
  // Collect up to limit + 1 matches: the extra one, if any, is where the next page starts.
  // With an externalId filter the index is read in larger batches.
  for (;;) {
    const wanted = input.limit + 1 - items.length;
    const page = pageApiKeyIds(input.apiId, from, input.externalId === undefined ? wanted : wanted * PAGE_SCAN_FACTOR);
    for (const keyId of page.keyIds) {
      const record = getRecord<KeyRecordBase>('keys', keyId);
      if (record === undefined) continue;
      if (input.externalId !== undefined && record.externalId !== input.externalId) continue;
      if (items.length === input.limit) return { items, cursor: encodeCursor(list, keyId), hasMore: true };
      items.push(keyView(record));
    }
    from = page.nextKeyId;
    if (from === undefined) return { items, cursor: undefined, hasMore: false };
  }
}
