// `keyward import <file>`: an export (transfer.ts) loaded into a store, in two passes over the
// file:
//  1. check: every line parses and is a record of the format, in the format's order; no record
//     comes twice; what a record names (its workspace, a key's API, identity, roles and
//     permissions, an override's namespace) is in the file or the store; the file ends with its end line and its counts; and each record
//     is either absent from the store or there already with the same content (then skipped).
//     Nothing is written until the whole file passed.
//  2. load: BATCH lines per write transaction, through the caller's writer (the store's own, or
//     a cluster's). Each record is compared with the store again inside its transaction; a
//     record written by someone else since the check stops the import there, the batches before
//     it committed, and running the import again skips what they wrote.
// A record is written with the store's own functions (saveKey, putPermission, …), which write
// the indexes that go with it; a key's credits as exported (a due refill applies on their next
// read, as it would have). A key already in the store keeps its own credits.
import { createReadStream, existsSync, statSync } from 'node:fs';
import { createInterface } from 'node:readline';
import type { AsyncWriter } from './db.js';
import { getRecord, getText, putRecord } from './db.js';
import { putIdentity } from './identities.js';
import { getMigration, putMigration } from './migrations.js';
import { idxGet } from './indexes.js';
import { getKeyRecord, saveKey, writeCredits } from './keys.js';
import { putPermission, putRole } from './permissions.js';
import { namespaceKey, overrideKey, putNamespace, putOverride } from './ratelimits.js';
import { IDX, type ApiRecord, type IdentityRecord, type KeyRecord, type PermissionRecord, type RoleRecord } from './records.js';
import { putRootKey } from './rootKeys.js';
import { FORMAT, KINDS, parseLine, PLURAL, sameValue, TransferError, VERSION, zeroCounts, type Counts, type CreditsLine, type End, type Header, type Kind, type RecordLine, type RecordOf } from './transfer.js';

/** Record lines per write transaction (a transaction of 10,000 keys holds the writer for about 0.1 s). */
export const BATCH = 10_000;

export interface ImportSummary {
  imported: Counts;
  /** Records the store held already, with the same content. */
  skipped: number;
}

/** A value no two records may hold (an id, a hash, a slug in its workspace…). */
interface Claim {
  /** For messages and for spotting it twice in the file: "key hash …", "permission slug … in ws_…". */
  readonly what: string;
  /** What the store holds under it (an id, or a table key), if anything. */
  holder(): string | undefined;
  /** What this record would put there. */
  readonly mine: string;
}

interface Adapter<R> {
  /** The store's record where this one goes (same id), if any. */
  stored(r: R): unknown;
  /** The values it takes besides its place; the first claim is its identity. */
  claims(r: R): Claim[];
  /** Writes it and its indexes (inside the caller's transaction). */
  put(r: R, nowMs: number, credits: CreditsLine | undefined): void;
}

const claim = (what: string, holder: () => string | undefined, mine: string): Claim => ({ what, holder, mine });

const ADAPTERS: { readonly [K in Kind]: Adapter<RecordOf[K]> } = {
  workspace: {
    stored: (r) => getRecord('workspaces', r.id),
    claims: (r) => [claim(`workspace ${r.id}`, () => undefined, r.id)],
    put: (r) => putRecord('workspaces', r.id, r),
  },
  migration: {
    stored: (r) => getMigration(r.id),
    claims: (r) => [claim(`migration ${r.id}`, () => undefined, r.id)],
    put: (r) => putMigration(r),
  },
  root_key: {
    stored: (r) => getRecord('root_keys', r.id),
    claims: (r) => [claim(`root key ${r.id}`, () => undefined, r.id), claim(`root key hash ${r.hash}`, () => getText('root_key_hashes', r.hash), r.id)],
    put: (r) => putRootKey(r),
  },
  api: {
    stored: (r) => getRecord('apis', r.id),
    claims: (r) => [claim(`api ${r.id}`, () => undefined, r.id)],
    put: (r) => putRecord('apis', r.id, r),
  },
  permission: {
    stored: (r) => getRecord('permissions', r.id),
    claims: (r) => [claim(`permission ${r.id}`, () => undefined, r.id), claim(`permission slug ${JSON.stringify(r.slug)} in ${r.workspaceId}`, () => idxGet(IDX.permSlug(r.workspaceId, r.slug)), r.id)],
    put: (r, nowMs) => putPermission(r, nowMs),
  },
  role: {
    stored: (r) => getRecord('roles', r.id),
    claims: (r) => [claim(`role ${r.id}`, () => undefined, r.id), claim(`role name ${JSON.stringify(r.name)} in ${r.workspaceId}`, () => idxGet(IDX.roleName(r.workspaceId, r.name)), r.id)],
    put: (r) => void putRole(r, r.permissions.map((slug) => permissionBySlug(r.workspaceId, slug)).filter((p): p is PermissionRecord => p !== undefined)),
  },
  identity: {
    stored: (r) => getRecord('identities', r.id),
    claims: (r) => [claim(`identity ${r.id}`, () => undefined, r.id), claim(`identity externalId ${JSON.stringify(r.externalId)} in ${r.workspaceId}`, () => idxGet(IDX.identExt(r.workspaceId, r.externalId)), r.id)],
    put: (r) => putIdentity(r),
  },
  ratelimit_namespace: {
    stored: (r) => getRecord('ratelimit_namespaces', namespaceKey(r.workspaceId, r.name)),
    claims: (r) => {
      const key = namespaceKey(r.workspaceId, r.name);
      return [claim(`ratelimit namespace ${JSON.stringify(r.name)} in ${r.workspaceId}`, () => undefined, key), claim(`ratelimit namespace ${r.id}`, () => idxGet(IDX.nsId(r.id)), key)];
    },
    put: (r) => putNamespace(r),
  },
  ratelimit_override: {
    stored: (r) => getRecord('ratelimit_overrides', overrideKey(r.namespaceId, r.identifier)),
    claims: (r) => {
      const key = overrideKey(r.namespaceId, r.identifier);
      return [claim(`ratelimit override of ${JSON.stringify(r.identifier)} in ${r.namespaceId}`, () => undefined, key), claim(`ratelimit override ${r.id}`, () => idxGet(IDX.nsOverrides(r.namespaceId) + r.id), key)];
    },
    put: (r) => putOverride(r),
  },
  key: {
    stored: (r) => getKeyRecord(r.id),
    claims: (r) => [claim(`key ${r.id}`, () => undefined, r.id), claim(`key hash ${r.hash}`, () => getRecord<{ id: string }>('key_records', Buffer.from(r.hash, 'base64'))?.id, r.id)],
    put: (r, _nowMs, credits) => {
      saveKey(r, undefined);
      if (credits !== undefined) writeCredits(r.id, [credits.remaining, credits.refillAmount, credits.refillDay, credits.lastRefillAtMs]);
    },
  },
};

function adapter<K extends Kind>(line: { type: K }): Adapter<RecordOf[K]> {
  return ADAPTERS[line.type];
}

function permissionBySlug(workspaceId: string, slug: string): PermissionRecord | undefined {
  const id = idxGet(IDX.permSlug(workspaceId, slug));
  return id === undefined ? undefined : getRecord<PermissionRecord>('permissions', id);
}

/** 'new', 'same' (the store has it as it is in the file), or why it cannot be written. */
function stateOf(line: RecordLine): 'new' | 'same' | string {
  const a = adapter(line);
  const stored = a.stored(line.record);
  const [identity, ...others] = a.claims(line.record);
  if (stored !== undefined) return sameValue(stored, line.record) ? 'same' : `${identity?.what ?? line.type} is in the store with other content`;
  for (const c of others) {
    const holder = c.holder();
    if (holder !== undefined && holder !== c.mine) return `${c.what} is taken in the store (by ${holder})`;
  }
  return 'new';
}

/** The file's lines with their numbers (from 1). */
async function* lines(path: string): AsyncGenerator<[number, string]> {
  if (!existsSync(path)) throw new TransferError(`${path} does not exist`);
  if (!statSync(path).isFile()) throw new TransferError(`${path} is not a file: name the file keyward export wrote`);
  let no = 0;
  for await (const text of createInterface({ input: createReadStream(path), crlfDelay: Infinity })) yield [++no, text];
}

/** The header of an export (read before a store is opened, so a file that is none changes nothing). */
export async function readHeader(path: string): Promise<Header> {
  for await (const [no, text] of lines(path)) {
    let header: ReturnType<typeof parseLine> | undefined;
    try {
      header = parseLine(text, no);
    } catch {
      header = undefined;
    }
    if (header?.type !== FORMAT) throw new TransferError(`${path} is not a keyward export: its first line is not {"type":"${FORMAT}",…}`);
    if (header.version !== VERSION) throw new TransferError(`${path} is a keyward export of version ${JSON.stringify(header.version)}; this keyward reads version ${VERSION}`);
    return header;
  }
  throw new TransferError(`${path} is empty, not a keyward export`);
}

/** The record lines of the file, each checked on its own and in its place in the file (header first, kinds in order, the end line last and matching). */
async function* recordLines(path: string): AsyncGenerator<[number, RecordLine]> {
  await readHeader(path);
  const counts = zeroCounts();
  let end: End | undefined;
  let kindAt = 0;
  for await (const [no, text] of lines(path)) {
    if (no === 1) continue;
    const fail = (problem: string): never => {
      throw new TransferError(`${path}: line ${no}: ${problem}`);
    };
    if (end !== undefined) fail('comes after the end line');
    let line: ReturnType<typeof parseLine>;
    try {
      line = parseLine(text, no);
    } catch (err) {
      throw new TransferError(`${path}: ${(err as Error).message}`);
    }
    if (line.type === FORMAT) fail('a second header: is this two exports in one file?');
    else if (line.type === 'end') end = line;
    else {
      const at = KINDS.indexOf(line.type);
      if (at < kindAt) fail(`a ${line.type} after the ${KINDS[kindAt] ?? ''} records (an export writes ${KINDS.join(', ')} in that order)`);
      kindAt = at;
      counts[PLURAL[line.type]]++;
      if (line.credits !== undefined) counts.credits++;
      yield [no, line];
    }
  }
  if (end === undefined) throw new TransferError(`${path} ends without its end line: the export was cut short`);
  const differ = Object.entries(counts).filter(([name, n]) => end.counts[name as keyof Counts] !== n);
  if (differ.length > 0) throw new TransferError(`${path}: the end line's counts differ from the lines (${differ.map(([name, n]) => `${name}: ${n}, end line says ${end.counts[name as keyof Counts]}`).join('; ')})`);
}

/**
 * What a key names besides its API, each in the file or the store, in the key's workspace: its
 * identity (holding the key's externalId), its roles, its permissions (by slug). An export
 * writes keys as they are served, so it names nothing else (export.ts asServed).
 */
function keyReferenceProblem(key: KeyRecord, file: FileRecords): string | undefined {
  const ws = key.workspaceId;
  if (key.identityId !== undefined) {
    const identity = file.identities.get(key.identityId) ?? getRecord<IdentityRecord>('identities', key.identityId);
    if (identity?.workspaceId !== ws) return `identity ${key.identityId} of workspace ${ws} is neither in the file nor in the store`;
    if (key.externalId !== undefined && identity.externalId !== key.externalId) return `the key's externalId ${JSON.stringify(key.externalId)} is not its identity's (${JSON.stringify(identity.externalId)})`;
  } else if (key.externalId !== undefined) {
    return `the key has an externalId but no identityId`;
  }
  const role = key.roleIds.find((id) => (file.roles.get(id) ?? getRecord<RoleRecord>('roles', id)?.workspaceId) !== ws);
  if (role !== undefined) return `role ${role} of workspace ${ws} is neither in the file nor in the store`;
  const slug = key.permissions.find((p) => !file.permissions.has(slugKey(ws, p)) && idxGet(IDX.permSlug(ws, p)) === undefined);
  if (slug !== undefined) return `permission ${JSON.stringify(slug)} of workspace ${ws} is neither in the file nor in the store`;
  return undefined;
}

/** The records of the file that others name, as check() has read them so far. */
interface FileRecords {
  identities: Map<string, IdentityRecord>;
  /** Role id → its workspace. */
  roles: Map<string, string>;
  /** slugKey of each permission. */
  permissions: Set<string>;
}

const slugKey = (workspaceId: string, slug: string): string => `${workspaceId}\n${slug}`;

/** Pass 1: the whole file checked against itself and the open store; the first problem thrown. */
async function check(path: string): Promise<void> {
  const firstLine = new Map<string, number>();
  const workspaces = new Set<string>();
  const apis = new Map<string, string>();
  const namespaces = new Set<string>();
  const file: FileRecords = { identities: new Map(), roles: new Map(), permissions: new Set() };
  const hasWorkspace = (id: string): boolean => workspaces.has(id) || getRecord('workspaces', id) !== undefined;
  for await (const [no, line] of recordLines(path)) {
    const fail = (problem: string): never => {
      throw new TransferError(`${path}: line ${no}: ${problem}`);
    };
    for (const c of adapter(line).claims(line.record)) {
      const before = firstLine.get(c.what);
      if (before !== undefined) fail(`${c.what} is on line ${before} too`);
      firstLine.set(c.what, no);
    }
    const r = line.record;
    if ('workspaceId' in r && !hasWorkspace(r.workspaceId)) fail(`workspace ${r.workspaceId} is neither in the file nor in the store`);
    if (line.type === 'key') {
      const { apiId, workspaceId } = line.record;
      if ((apis.get(apiId) ?? getRecord<ApiRecord>('apis', apiId)?.workspaceId) !== workspaceId) fail(`api ${apiId} of workspace ${workspaceId} is neither in the file nor in the store`);
      const problem = keyReferenceProblem(line.record, file);
      if (problem !== undefined) fail(problem);
    }
    if (line.type === 'ratelimit_override' && !namespaces.has(line.record.namespaceId) && idxGet(IDX.nsId(line.record.namespaceId)) === undefined) fail(`ratelimit namespace ${line.record.namespaceId} is neither in the file nor in the store`);
    if (line.type === 'workspace') workspaces.add(line.record.id);
    if (line.type === 'api') apis.set(line.record.id, line.record.workspaceId);
    if (line.type === 'ratelimit_namespace') namespaces.add(line.record.id);
    if (line.type === 'identity') file.identities.set(line.record.id, line.record);
    if (line.type === 'role') file.roles.set(line.record.id, line.record.workspaceId);
    if (line.type === 'permission') file.permissions.add(slugKey(line.record.workspaceId, line.record.slug));
    const state = stateOf(line);
    if (state !== 'new' && state !== 'same') fail(state);
  }
}

/** Writes one batch (inside the caller's transaction; it may run more than once). */
function load(batch: readonly [number, RecordLine][], nowMs: number): ImportSummary {
  const imported = zeroCounts();
  let skipped = 0;
  for (const [no, line] of batch) {
    const state = stateOf(line);
    if (state === 'same') {
      skipped++;
      continue;
    }
    if (state !== 'new') throw new TransferError(`line ${no}: ${state} (written since the file was checked)`);
    adapter(line).put(line.record, nowMs, line.credits);
    imported[PLURAL[line.type]]++;
    if (line.credits !== undefined) imported.credits++;
  }
  return { imported, skipped };
}

/**
 * Loads the export in `path` into the open store through `writer` (module comment: checked in
 * full first, then written BATCH lines per transaction).
 */
export async function importFile(path: string, writer: AsyncWriter, nowMs: number): Promise<ImportSummary> {
  await check(path);
  const total: ImportSummary = { imported: zeroCounts(), skipped: 0 };
  let batch: [number, RecordLine][] = [];
  const flush = async (): Promise<void> => {
    if (batch.length === 0) return;
    const lines = batch;
    batch = [];
    let done: ImportSummary;
    try {
      done = await writer.transact(() => load(lines, nowMs));
    } catch (err) {
      const committed = Object.values(total.imported).some((n) => n > 0) || total.skipped > 0;
      const prefix = committed ? `the records before line ${lines[0]?.[0] ?? 0} are imported; running the import again skips them: ` : 'nothing was imported: ';
      throw new TransferError(`${path}: ${prefix}${(err as Error).message}`);
    }
    for (const [name, n] of Object.entries(done.imported)) total.imported[name as keyof Counts] += n;
    total.skipped += done.skipped;
  };
  for await (const entry of recordLines(path)) {
    batch.push(entry);
    if (batch.length >= BATCH) await flush();
  }
  await flush();
  return total;
}
