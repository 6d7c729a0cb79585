// Backups of a live store and their restore (docs/operations.md, "Backup and restore").
//
// A backup is a directory: `data.mdb`, LMDB's compacted copy of the store taken in one read
// transaction (so it is one commit's consistent state, while the server goes on writing),
// and `manifest.json` (what it is, when, which commit, its size and SHA-256). It is written
// under a temporary name, checked (its pages walked, as at start-up), made durable and only
// then renamed to its name: a backup directory that exists is complete. A restore copies the
// data file into the data dir under a temporary name too; a data dir where that name is left
// (the restore did not finish) is opened by nothing until the restore is run again.
//
// A plain file copy of a live store is not a backup: LMDB rewrites pages in place while the
// copy reads them, and such copies open as corrupt or, worse, open with records missing.
import { closeSync, existsSync, fsyncSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, renameSync, rmSync, statSync, writeFileSync, copyFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { basename, dirname, join, resolve } from 'node:path';
import { native } from '../engine/native.js';
import { checkPages, DATA_FILE as DATA, hasStore } from './integrity.js';
import { processAlive } from './processes.js';

export const MANIFEST = 'manifest.json';
/** The name a restore copies the backup's data file under, in the data dir, before renaming it into place. */
const RESTORING = `${DATA}.restoring`;
const FORMAT = 'keyward-backup';
const VERSION = 1;

export interface Manifest {
  readonly format: typeof FORMAT;
  readonly version: number;
  readonly createdAt: string;
  /** The store's format: LMDB 0.9's data file, its page size and the tables it holds. */
  readonly store: { readonly lmdbDataVersion: 1; readonly pageSize: number; readonly tables: readonly [string, number][] };
  /** The last commit of the live store before the copy began: the copy holds it (or a later one). */
  readonly lastTxnId: number;
  readonly bytes: number;
  readonly sha256: string;
  readonly source: { readonly dataDir: string; readonly cluster: boolean; readonly nodeId?: string };
}

export class BackupError extends Error {}

function sha256File(path: string): string {
  const hash = createHash('sha256');
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.allocUnsafe(1 << 20);
    for (let n; (n = readSync(fd, buf, 0, buf.length, null)) > 0; ) hash.update(buf.subarray(0, n));
  } finally {
    closeSync(fd);
  }
  return hash.digest('hex');
}

function fsyncPath(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

const isEmptyDir = (dir: string): boolean => readdirSync(dir).length === 0;

/**
 * Backs up the open store into `target` (which must not exist, or be an empty directory).
 * `source`: where it came from (a cluster node's replica says so).
 */
export function takeBackup(target: string, source: Manifest['source']): Manifest {
  const to = resolve(target);
  if (existsSync(to) && !(statSync(to).isDirectory() && isEmptyDir(to))) throw new BackupError(`${to} already exists and is not an empty directory: back up into a new one`);
  mkdirSync(dirname(to), { recursive: true });
  removeStalePartials(dirname(to));
  const partial = join(dirname(to), `.${basename(to)}.partial-${process.pid}`);
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial);
  try {
    const lastTxnId = native.backup(partial);
    const data = join(partial, DATA);
    fsyncPath(data);
    const pages = checkPages(partial, 0);
    if (pages.problems.length > 0) throw new BackupError(`the copy does not check out: ${pages.problems.join('; ')}`);
    const manifest: Manifest = {
      format: FORMAT,
      version: VERSION,
      createdAt: new Date().toISOString(),
      store: { lmdbDataVersion: 1, pageSize: pages.pageSize, tables: pages.tables },
      lastTxnId,
      bytes: statSync(data).size,
      sha256: sha256File(data),
      source,
    };
    writeFileSync(join(partial, MANIFEST), JSON.stringify(manifest, null, 2) + '\n');
    fsyncPath(join(partial, MANIFEST));
    fsyncPath(partial);
    if (existsSync(to)) rmSync(to, { recursive: true });
    renameSync(partial, to);
    fsyncPath(dirname(to));
    return manifest;
  } catch (err) {
    rmSync(partial, { recursive: true, force: true });
    throw err;
  }
}

/**
 * The hidden directories of backups into `parent` that were killed before their rename, once
 * their process is gone, removed: a partial directory holds nothing but what a backup writes
 * (anything else there, or a process of its number alive, and it is left as it is).
 */
function removeStalePartials(parent: string): void {
  for (const name of readdirSync(parent)) {
    const pid = /^\..+\.partial-(\d+)$/.exec(name)?.[1];
    if (pid === undefined || processAlive(Number(pid))) continue;
    const dir = join(parent, name);
    if (!lstatSync(dir).isDirectory() || readdirSync(dir).some((file) => file !== DATA && file !== MANIFEST)) continue;
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Whether `dir` is a backup `keyward backup` wrote (its manifest is there). */
export function isBackup(dir: string): boolean {
  return existsSync(join(resolve(dir), MANIFEST));
}

/**
 * The problem of a data dir a restore did not finish in (it was killed, or the machine went
 * down, while it copied the backup's data file under its temporary name or before it renamed
 * it into place); undefined otherwise. A server would start there on a new, empty store, or
 * on the store the restore was replacing.
 */
export function interruptedRestoreProblem(dataDir: string): string | undefined {
  const dir = resolve(dataDir);
  if (!existsSync(join(dir, RESTORING))) return undefined;
  const replacing = hasStore(dir);
  return (
    `a keyward restore into ${dir} did not finish: ${RESTORING}, the backup's data file copied under a temporary name, is still there` +
    `${replacing ? `, and ${DATA} is the store the restore was replacing` : ` and there is no ${DATA}`}. Run the restore again (keyward restore <backup> --data-dir ${dir}${replacing ? ' --force' : ''})`
  );
}

/**
 * Refuses a dir no store may be opened in: a backup (opening a store writes to it, and a
 * backup that changed is one restore refuses: its manifest's size and SHA-256 no longer
 * match), or a data dir a restore did not finish in.
 */
export function refuseBackup(dataDir: string): void {
  const interrupted = interruptedRestoreProblem(dataDir);
  if (interrupted !== undefined) throw new BackupError(`${interrupted}; until then no store is opened there`);
  if (!isBackup(dataDir)) return;
  throw new BackupError(`${resolve(dataDir)} is a backup (it holds ${MANIFEST}): opening its store would change it, and restore would then refuse it. Restore it into a data dir (keyward restore ${dataDir} --data-dir <dir>); keyward check --data-dir ${dataDir} checks it without changing it`);
}

/**
 * Runs `use` with a directory holding a copy of the backup's data file (inside the backup,
 * removed after), for a check that opens the store: the backup itself stays as taken.
 */
export function withBackupCopy<T>(backupDir: string, use: (dir: string) => T): T {
  const dir = join(resolve(backupDir), `.check-${process.pid}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir);
  try {
    copyFileSync(join(resolve(backupDir), DATA), join(dir, DATA));
    return use(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The manifest of the backup in `dir`, once its data file matches it (size, SHA-256) and its pages check out. */
export function verifyBackup(dir: string): Manifest {
  const manifest = verifyManifest(dir);
  const from = resolve(dir);
  const pages = checkPages(from, 0);
  if (pages.problems.length > 0) throw new BackupError(`${from}: the backup's store does not check out: ${pages.problems.join('; ')}`);
  return manifest;
}

/** The manifest of the backup in `dir`, once its data file matches it (size, SHA-256); its pages are not walked. */
export function verifyManifest(dir: string): Manifest {
  const from = resolve(dir);
  let manifest: Manifest;
  try {
    manifest = JSON.parse(readFileSync(join(from, MANIFEST), 'utf8')) as Manifest;
  } catch (err) {
    throw new BackupError(`${from} is not a keyward backup: ${MANIFEST} cannot be read (${(err as Error).message})`);
  }
  if (manifest.format !== FORMAT || manifest.version !== VERSION) throw new BackupError(`${from}: ${MANIFEST} is not a keyward backup manifest of version ${VERSION}`);
  const data = join(from, DATA);
  if (!existsSync(data)) throw new BackupError(`${from} has no ${DATA}: the backup is incomplete`);
  const bytes = statSync(data).size;
  const changed = 'the backup changed since it was taken (a server started on it writes to it: back that dir up with keyward backup instead) or is damaged';
  if (bytes !== manifest.bytes) throw new BackupError(`${from}: ${DATA} is ${bytes} bytes, the manifest says ${manifest.bytes}: ${changed}`);
  if (sha256File(data) !== manifest.sha256) throw new BackupError(`${from}: the SHA-256 of ${DATA} differs from the manifest's: ${changed}`);
  return manifest;
}

/**
 * Restores the backup in `backupDir` as the store of `dataDir`: refused when `dataDir` holds
 * anything (but what an interrupted restore left) unless `force` (the server must be stopped:
 * a running one keeps the old store open), and always when it is a backup. The data file is
 * copied under a temporary name, made durable, then renamed.
 */
export function restoreBackup(backupDir: string, dataDir: string, force: boolean): Manifest {
  const manifest = verifyBackup(backupDir);
  const to = resolve(dataDir);
  if (isBackup(to)) {
    const what = to === resolve(backupDir) ? 'is the backup being restored' : `holds a backup (its ${MANIFEST})`;
    throw new BackupError(`${to} ${what}: restoring into it would replace the backup's ${DATA}, even with --force. Restore into a data dir of its own`);
  }
  const held = existsSync(to) ? readdirSync(to).filter((name) => name !== RESTORING) : [];
  if (held.length > 0 && !force) throw new BackupError(`${to} is not empty: restore into an empty data dir, or pass --force to replace the store there (stop the server first)`);
  // --force or not: a store a server has open is never replaced under it (what it wrote next would be lost).
  if (hasStore(to) && native.storeInUse(to)) throw new BackupError(`${to} holds a store a running process has open (a keyward server?): stop it, then restore`);
  mkdirSync(to, { recursive: true });
  const partial = join(to, RESTORING);
  copyFileSync(join(resolve(backupDir), DATA), partial);
  fsyncPath(partial);
  // The lock file of the store replaced holds its readers; LMDB makes a new one.
  rmSync(join(to, 'lock.mdb'), { force: true });
  renameSync(partial, join(to, DATA));
  fsyncPath(to);
  return manifest;
}
