// `keyward export`: the records of one commit's state of the store as JSON lines (transfer.ts).
//
// One consistent state while a server writes: the store is copied as `keyward backup` copies it
// (LMDB's compacted copy in one read transaction), the copy is opened in place of the store
// and read, then removed. The copy is made inside the data dir (same filesystem, so as much
// room as the store needs; a copy an export killed midway left is removed by the next export).
//
// What is written is what the store serves: deleted APIs and their keys are left out, and
// a key does not name a permission, role or identity deleted while its unlinking was still
// running (store/cascades.ts). Rate-limit windows are transient counters and are not written.
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { native } from '../engine/native.js';
import type { Table } from '../engine/tables.js';
import { decode, getRecord, tableEntries } from './db.js';
import { allGone } from './gone.js';
import { DATA_FILE } from './integrity.js';
import { processAlive } from './processes.js';
import { listMigrations } from './migrations.js';
import type { KeyRecord, WorkspaceRecord } from './records.js';
import { FORMAT, formatLine, PLURAL, TransferError, VERSION, zeroCounts, type Counts, type CreditsLine, type Kind, type RecordLine, type RecordOf } from './transfer.js';

/** Where a text goes (stdout): resolves once it may take more. */
export type Sink = (text: string) => Promise<void>;

const SNAPSHOT_PREFIX = '.export-snapshot-';
/** Entries per native read. */
const PAGE = 1_000;
/** Text gathered before it is written. */
const CHUNK_CHARS = 1 << 20;
/** Before every refill instant, so creditsGet returns the record as stored (no refill applied). */
const BEFORE_ANY_REFILL_MS = Number.MIN_SAFE_INTEGER;

/**
 * Exports one commit's state of the store of `dataDir` (all of it, or one workspace's records)
 * to `out`. `copy(dir)` writes a compacted copy of the store into the new, empty `dir`
 * (native.backup with the store open) and closes the store: the process has one environment,
 * which then holds the copy while it is read.
 */
export async function exportSnapshot(dataDir: string, copy: (dir: string) => Promise<void>, out: Sink, workspaceId: string | undefined): Promise<Counts> {
  removeAbandonedSnapshots(dataDir);
  const dir = join(resolve(dataDir), `${SNAPSHOT_PREFIX}${process.pid}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  try {
    await copy(dir);
    native.open(dir, false, 0, statSync(join(dir, DATA_FILE)).size + (64 << 20));
    try {
      return await exportRecords(out, workspaceId);
    } finally {
      native.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Removes the copies of exports that were killed (their process is gone). */
function removeAbandonedSnapshots(dataDir: string): void {
  if (!existsSync(dataDir)) return;
  for (const name of readdirSync(dataDir)) {
    if (!name.startsWith(SNAPSHOT_PREFIX)) continue;
    const pid = Number(name.slice(SNAPSHOT_PREFIX.length));
    if (Number.isSafeInteger(pid) && pid !== process.pid && !processAlive(pid)) rmSync(join(dataDir, name), { recursive: true, force: true });
  }
}

/** The records of `table`, decoded, that `keep` keeps. */
function* records<K extends Kind>(table: Table, keep: (r: RecordOf[K]) => boolean): Generator<RecordOf[K]> {
  for (const [, value] of tableEntries(table, PAGE)) {
    const r = decode<RecordOf[K]>(value);
    if (keep(r)) yield r;
  }
}

/** The open store's records (all, or `workspaceId`'s) as export lines, written to `out`. */
export async function exportRecords(out: Sink, workspaceId: string | undefined): Promise<Counts> {
  if (workspaceId !== undefined && getRecord<WorkspaceRecord>('workspaces', workspaceId) === undefined) throw new TransferError(`workspace ${workspaceId} does not exist`);
  const counts = zeroCounts();
  let text = '';
  const put = async (line: string): Promise<void> => {
    text += line;
    if (text.length >= CHUNK_CHARS) {
      const chunk = text;
      text = '';
      await out(chunk);
    }
  };
  const emit = async (line: RecordLine): Promise<void> => {
    counts[PLURAL[line.type]]++;
    if (line.credits !== undefined) counts.credits++;
    await put(formatLine(line));
  };
  await put(formatLine(workspaceId === undefined ? { type: FORMAT, version: VERSION } : { type: FORMAT, version: VERSION, workspaceId }));

  const workspaces = new Set<string>();
  for (const record of records<'workspace'>('workspaces', (w) => workspaceId === undefined || w.id === workspaceId)) {
    workspaces.add(record.id);
    await emit({ type: 'workspace', record });
  }
  const inWorkspace = (r: { workspaceId: string }): boolean => workspaces.has(r.workspaceId);
  for (const record of listMigrations(workspaceId)) if (inWorkspace(record)) await emit({ type: 'migration', record });
  for (const record of records<'root_key'>('root_keys', inWorkspace)) await emit({ type: 'root_key', record });
  const apis = new Set<string>();
  for (const record of records<'api'>('apis', (a) => inWorkspace(a) && a.deletedAtMs === undefined)) {
    apis.add(record.id);
    await emit({ type: 'api', record });
  }
  for (const record of records<'permission'>('permissions', inWorkspace)) await emit({ type: 'permission', record });
  const roles = new Set<string>();
  for (const record of records<'role'>('roles', inWorkspace)) {
    roles.add(record.id);
    await emit({ type: 'role', record });
  }
  const identities = new Set<string>();
  for (const record of records<'identity'>('identities', inWorkspace)) {
    identities.add(record.id);
    await emit({ type: 'identity', record });
  }
  const namespaces = new Set<string>();
  for (const record of records<'ratelimit_namespace'>('ratelimit_namespaces', inWorkspace)) {
    namespaces.add(record.id);
    await emit({ type: 'ratelimit_namespace', record });
  }
  for (const record of records<'ratelimit_override'>('ratelimit_overrides', (o) => namespaces.has(o.namespaceId))) await emit({ type: 'ratelimit_override', record });

  const gone = goneSlugs();
  for (const stored of records<'key'>('key_records', (k) => apis.has(k.apiId) && inWorkspace(k))) {
    const record = asServed(stored, gone.get(stored.workspaceId), roles, identities);
    const credits = native.creditsGet(record.id, BEFORE_ANY_REFILL_MS);
    const line: RecordLine = { type: 'key', record };
    if (credits !== undefined) line.credits = { remaining: credits[0], refillAmount: credits[1], refillDay: credits[2], lastRefillAtMs: credits[3] } satisfies CreditsLine;
    await emit(line);
  }
  await put(formatLine({ type: 'end', counts }));
  if (text.length > 0) await out(text);
  return counts;
}

/** The permissions deleted but not yet taken off every key, by workspace (gone.ts). */
function goneSlugs(): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const g of allGone()) out.set(g.workspaceId, (out.get(g.workspaceId) ?? new Set()).add(g.slug));
  return out;
}

/** The key as verification and the key views see it: without what was deleted while its unlinking runs. */
function asServed(key: KeyRecord, gone: ReadonlySet<string> | undefined, roles: ReadonlySet<string>, identities: ReadonlySet<string>): KeyRecord {
  let out = key;
  if (gone !== undefined && out.permissions.some((s) => gone.has(s))) out = { ...out, permissions: out.permissions.filter((s) => !gone.has(s)) };
  if (out.roleIds.some((r) => !roles.has(r))) out = { ...out, roleIds: out.roleIds.filter((r) => roles.has(r)) };
  if (out.identityId !== undefined && !identities.has(out.identityId)) {
    const { identityId: _identityId, externalId: _externalId, ...rest } = out;
    out = rest;
  }
  return out;
}
