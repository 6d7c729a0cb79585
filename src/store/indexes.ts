// The `indexes` table (layout in records.ts): string keys, values an id or empty.
import { native } from '../engine/native.js';
import { getText, has, scanPrefix, scanPrefixAll } from './db.js';

const EMPTY = Buffer.alloc(0);

export function idxGet(key: string): string | undefined {
  return getText('indexes', key);
}

/** Whether the entry is there (nothing is read out). */
export function idxHas(key: string): boolean {
  return has('indexes', key);
}

/** An entry's stored value: an id, or empty. */
export function indexValue(value = ''): Buffer {
  return value === '' ? EMPTY : Buffer.from(value, 'utf8');
}

export function idxPut(key: string, value = ''): void {
  native.put('indexes', key, indexValue(value));
}

export function idxDel(key: string): void {
  native.del('indexes', key);
}

/** The suffixes after `prefix`, in order, starting at suffix `from` (inclusive). */
export function idxList(prefix: string, from: string | undefined, limit: number): string[] {
  return scanPrefix('indexes', prefix, from === undefined ? undefined : prefix + from, limit).map((e) => e.key.slice(prefix.length));
}

/** Every suffix under `prefix` (for cascades; callers bound the size by the data model). */
export function idxAll(prefix: string): string[] {
  return scanPrefixAll('indexes', prefix).map((e) => e.key.slice(prefix.length));
}
