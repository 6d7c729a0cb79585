import { invalidCursor } from '../errors/errors.js';

// Pagination cursors are opaque to clients: base64url of `<list>:<next id>`, where the next
// id is the first item of the next page (inclusive), as Unkey pages. The list tag stops a
// cursor of one listing being replayed against another. Every id keyward issues is
// `prefix_` + base58 (domain/ids.ts), so a next id of any other form, which could not
// have come from a page, is refused like a foreign cursor rather than used as a store key.

export const DEFAULT_PAGE = 100;
export const MAX_PAGE = 100;

export function encodeCursor(list: string, nextId: string): string {
  return Buffer.from(`${list}:${nextId}`, 'utf8').toString('base64url');
}

const ISSUED_ID = /^[a-z]{1,8}_[1-9A-HJ-NP-Za-km-z]{1,64}$/;

export function decodeCursor(list: string, cursor: string | undefined): string | undefined {
  if (cursor === undefined || cursor === '') return undefined;
  const text = /^[A-Za-z0-9_-]+$/.test(cursor) ? Buffer.from(cursor, 'base64url').toString('utf8') : '';
  if (!text.startsWith(`${list}:`) || !ISSUED_ID.test(text.slice(list.length + 1))) {
    throw invalidCursor(cursor);
  }
  return text.slice(list.length + 1);
}

export interface Page<T> {
  items: T[];
  cursor: string | undefined;
  hasMore: boolean;
}
