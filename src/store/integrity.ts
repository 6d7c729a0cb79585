// The store's integrity (docs/operations.md, "Integrity"), in two parts:
//  - `checkPages`: the data file's pages and trees, walked without LMDB before the store is
//    opened (native/src/check.rs), so a damaged page is a report rather than an abort inside
//    LMDB;
//  - `checkRecords`: on the open store, every record of the record tables decodes, and the
//    records that name each other agree (a key's id and hash entries, its API, the API's
//    workspace, root keys and their hashes, API listings). A reference found missing is read
//    again before it counts, so records another process changes meanwhile are not damage.
// `keyward serve` runs both within a time budget before it serves (a sample of a big store),
// `keyward check` runs both in full.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { native } from '../engine/native.js';
import type { Table } from '../engine/tables.js';
import { decode, getBytes, getText, has, tableEntries } from './db.js';
import type { ApiRecord, KeyRecord, RootKeyRecord } from './records.js';

/** The store's data file in its data dir (LMDB's name for it). */
export const DATA_FILE = 'data.mdb';

/** Whether `dataDir` holds a store (a data dir without one has nothing to check or copy). */
export function hasStore(dataDir: string): boolean {
  return existsSync(join(dataDir, DATA_FILE));
}

/** What a store leaves beside its data file; found without it, the data file is gone (LMDB makes both at once). */
const BESIDE_STORE = ['lock.mdb', 'analytics.duckdb'];

/**
 * The problem of a data dir whose data file was removed (what held a store must not start
 * again as a new, empty one); undefined when it holds a store or never held one.
 */
export function lostStoreProblem(dataDir: string): string | undefined {
  if (hasStore(dataDir)) return undefined;
  const left = BESIDE_STORE.filter((name) => existsSync(join(dataDir, name)));
  if (left.length === 0) return undefined;
  return `the data file ${DATA_FILE} is missing, though ${left.join(' and ')} of a store ${left.length === 1 ? 'is' : 'are'} there: the store was removed or lost (if this dir never held data, remove ${left.join(' and ')} to start a new store)`;
}

/** A store LMDB refused to open because its file is not one it can read (both meta pages needed). */
export function unreadableStoreProblem(err: unknown): string | undefined {
  const message = (err as Error).message;
  return /MDB_INVALID|MDB_CORRUPTED|MDB_VERSION_MISMATCH|MDB_PAGE_NOTFOUND/.test(message) ? `LMDB cannot open the data file (${message.replace(/^.*?(MDB_[A-Z_]+)/, '$1')}): a meta page or the header is damaged` : undefined;
}

/** What native checkStore reports (native/src/check.rs Report). */
export interface PagesReport {
  /** No data file yet: a store not created. */
  readonly empty: boolean;
  /** Every page was walked (false: the budget ran out first). */
  readonly complete: boolean;
  /** No other process's commits moved the store on under the walk (else it may see pages reused meanwhile). */
  readonly settled: boolean;
  readonly pageSize: number;
  readonly txnId: number;
  readonly usedBytes: number;
  readonly pages: number;
  readonly tables: readonly [string, number][];
  readonly problems: readonly string[];
}

export interface RecordsReport {
  readonly records: number;
  readonly complete: boolean;
  readonly problems: readonly string[];
}

const MAX_PROBLEMS = 20;
/** Walks of a store another process keeps writing, before its problems count. */
const WALKS = 10;
const PAGE = 1_000;

/** The data file in `dir`, walked within `budgetMs` (0: in full). */
export function checkPages(dir: string, budgetMs: number): PagesReport {
  let before: string | undefined;
  for (let walk = 1; ; walk++) {
    const report = JSON.parse(native.checkStore(dir, budgetMs)) as PagesReport;
    if (report.settled || report.problems.length === 0) return report;
    // The same problems at the same transaction twice: damage, not a writer moving the store on.
    const seen = JSON.stringify([report.txnId, report.problems]);
    if (seen === before) return report;
    before = seen;
    if (walk >= WALKS) return { ...report, problems: [...report.problems, `the store kept changing during ${WALKS} walks (a server writing to it): check a backup of it instead (keyward backup, then keyward check --data-dir <backup>)`] };
  }
}

type Check = (key: Buffer, value: Buffer) => string | undefined;

function record<T extends { id?: unknown }>(value: Buffer): T | undefined {
  try {
    const v = decode<T>(value);
    return typeof v === 'object' && v !== null && typeof v.id === 'string' ? v : undefined;
  } catch {
    return undefined;
  }
}

/** A record that names something missing, unless it changed meanwhile (read again). */
function missing(table: Table, key: Buffer, value: Buffer, what: string): string | undefined {
  return getBytes(table, key)?.equals(value) === true ? what : undefined;
}

const decodes: Check = (key, value) => (record(value) === undefined ? `does not decode as a record` : undefined);

/** Per table: what each of its entries must satisfy. */
const CHECKS: readonly [Table, Check][] = [
  ['workspaces', decodes],
  ['permissions', decodes],
  ['roles', decodes],
  ['identities', decodes],
  ['ratelimit_namespaces', decodes],
  ['ratelimit_overrides', decodes],
  [
    'apis',
    (key, value) => {
      const api = record<ApiRecord>(value);
      if (api === undefined) return 'does not decode as a record';
      return !has('workspaces', api.workspaceId) ? missing('apis', key, value, `names workspace ${api.workspaceId}, which is missing`) : undefined;
    },
  ],
  [
    'root_keys',
    (key, value) => {
      const rk = record<RootKeyRecord>(value);
      if (rk === undefined) return 'does not decode as a record';
      if (!has('workspaces', rk.workspaceId)) return missing('root_keys', key, value, `names workspace ${rk.workspaceId}, which is missing`);
      return getText('root_key_hashes', rk.hash) !== rk.id ? missing('root_keys', key, value, 'has no hash entry naming it') : undefined;
    },
  ],
  ['root_key_hashes', (key, value) => (!has('root_keys', value.toString('utf8')) ? missing('root_key_hashes', key, value, `names root key ${value.toString('utf8')}, which is missing`) : undefined)],
  [
    'keys',
    (key, value) => {
      const rec = getBytes('key_records', value);
      if (rec === undefined) return missing('keys', key, value, 'names a key record that is missing');
      return record<KeyRecord>(rec)?.id !== key.toString('utf8') ? missing('keys', key, value, 'names a key record of another id') : undefined;
    },
  ],
  [
    'key_records',
    (key, value) => {
      const k = record<KeyRecord>(value);
      if (k === undefined) return 'does not decode as a record';
      if (getBytes('keys', k.id)?.equals(key) !== true) return missing('key_records', key, value, `is key ${k.id}, whose id entry is missing or names another hash`);
      if (!has('apis', k.apiId)) return missing('key_records', key, value, `is key ${k.id} of API ${k.apiId}, which is missing`);
      return !has('api_keys', `${k.apiId}/${k.id}`) ? missing('key_records', key, value, `is key ${k.id}, missing from its API's listing`) : undefined;
    },
  ],
  ['api_keys', (key, value) => (!has('keys', value.toString('utf8')) ? missing('api_keys', key, value, `lists key ${value.toString('utf8')}, which is missing`) : undefined)],
];

const show = (key: Buffer): string => (/^[\x20-\x7e]*$/.test(key.toString('latin1')) ? key.toString('latin1') : key.toString('base64'));

/**
 * The records of the open store, each table for its share of `budgetMs` (0: all of them):
 * a sample from the start of each table, or the whole store.
 */
export function checkRecords(budgetMs: number): RecordsReport {
  const problems: string[] = [];
  let records = 0;
  let complete = true;
  for (const [table, check] of CHECKS) {
    const until = budgetMs > 0 ? performance.now() + budgetMs / CHECKS.length : Infinity;
    let visited = 0;
    for (const [key, value] of tableEntries(table, PAGE)) {
      records++;
      const problem = check(key, value);
      if (problem !== undefined && problems.length < MAX_PROBLEMS) problems.push(`${table} ${show(key)}: ${problem}`);
      if (++visited % PAGE === 0 && performance.now() >= until) {
        complete = false;
        break;
      }
    }
  }
  return { records, complete, problems };
}
