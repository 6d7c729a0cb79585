// Telling a full disk from a broken one. LMDB reports a write that found no room as ENOSPC,
// or (when the page cache could not be written back) as EIO; an EIO on a filesystem with room
// to spare is a real I/O fault. serve.ts names the data dir at open; a storage failure is then
// 507 insufficient_storage when it says ENOSPC/EDQUOT, or EIO with less than LOW_SPACE_BYTES
// free there, and 503 storage_unavailable otherwise.
import { statfsSync } from 'node:fs';

/** Below this, an EIO on the data dir's filesystem is taken for lack of space. */
const LOW_SPACE_BYTES = 64 * 1024 * 1024;

let dataDir: string | undefined;

/** The data dir whose filesystem storage failures are checked against (and /metrics reports). */
export function watchDataDir(dir: string): void {
  dataDir = dir;
}

/** Bytes an unprivileged writer may still use on the data dir's filesystem; undefined when unknown. */
export function dataDirFreeBytes(): number | undefined {
  if (dataDir === undefined) return undefined;
  try {
    const s = statfsSync(dataDir);
    return s.bavail * s.bsize;
  } catch {
    return undefined;
  }
}

/** The data dir and its free bytes when `message` (a storage failure's) is for lack of space; else undefined. */
export function outOfSpace(message: string): { dir: string; free: number } | undefined {
  const full = /\b(ENOSPC|EDQUOT)\b/.test(message);
  if (!full && !/\bEIO\b/.test(message)) return undefined;
  const free = dataDirFreeBytes();
  if (dataDir === undefined || free === undefined) return undefined;
  return full || free < LOW_SPACE_BYTES ? { dir: dataDir, free } : undefined;
}
