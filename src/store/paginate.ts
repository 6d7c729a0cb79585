import { decodeCursor, encodeCursor, type Page } from '../domain/cursor.js';

/** Ids in order, starting at `from` (inclusive), at most `limit`. */
export type IdSource = (from: string | undefined, limit: number) => string[];

/**
 * Cursor pagination over an ordered id source: collects up to `limit` loadable items and
 * one more id, which becomes the next page's cursor (so `hasMore` is exact). `load` returns
 * undefined for ids to skip (filtered out, or removed concurrently).
 */
export function paginate<T>(list: string, cursor: string | undefined, limit: number, source: IdSource, load: (id: string) => T | undefined): Page<T> {
  let from = decodeCursor(list, cursor);
  const items: T[] = [];
  for (;;) {
    const wanted = limit + 1 - items.length;
    const ids = source(from, wanted + 1);
    for (const id of ids.slice(0, wanted)) {
      const item = load(id);
      if (item === undefined) continue;
      if (items.length === limit) return { items, cursor: encodeCursor(list, id), hasMore: true };
      items.push(item);
    }
    from = ids[wanted];
    if (from === undefined) return { items, cursor: undefined, hasMore: false };
  }
}
