// The format of `keyward export` and `keyward import` (docs/operations.md, "Export and
// import"): JSON lines, one self-describing object each, in this order:
//   {"type":"keyward-export","version":1[,"workspaceId":…]}      the header (nothing time-dependent,
//                                                                so two exports of one state are
//                                                                the same bytes)
//   {"type":<kind>,"record":{…}}                                  the records, kind by kind in
//                                                                KINDS order, each kind in its
//                                                                table's key order; a key's line
//                                                                adds "credits":{…} when it has any
//   {"type":"end","counts":{…}}                                  how many of each were written (a
//                                                                file cut short has no end line)
// A record is the stored msgpack map as JSON, unknown fields included (hashes are already base64
// text in the records). Index entries are not written: import rebuilds them from the records
// with the store's own functions.
import type { ApiRecord, IdentityRecord, KeyRecord, NamespaceRecord, OverrideRecord, PermissionRecord, RoleRecord, RootKeyRecord, WorkspaceRecord } from './records.js';
import type { MigrationRecord } from './migrations.js';

export const FORMAT = 'keyward-export';
export const VERSION = 1;

/** The kinds of record lines, in file order: each after the kinds its records name. */
export const KINDS = ['workspace', 'migration', 'root_key', 'api', 'permission', 'role', 'identity', 'ratelimit_namespace', 'ratelimit_override', 'key'] as const;
export type Kind = (typeof KINDS)[number];

/** The name of each kind (and of keys' credits) in the end line's counts and the summaries. */
export const PLURAL = {
  workspace: 'workspaces',
  migration: 'migrations',
  root_key: 'root_keys',
  api: 'apis',
  permission: 'permissions',
  role: 'roles',
  identity: 'identities',
  ratelimit_namespace: 'ratelimit_namespaces',
  ratelimit_override: 'ratelimit_overrides',
  key: 'keys',
} as const satisfies Record<Kind, string>;
export type CountName = (typeof PLURAL)[Kind] | 'credits';
export type Counts = Record<CountName, number>;

export function zeroCounts(): Counts {
  return { ...(Object.fromEntries(KINDS.map((kind) => [PLURAL[kind], 0])) as Record<(typeof PLURAL)[Kind], number>), credits: 0 };
}

/** A key's credits as native creditsGet/creditsSet take them (engine/native.ts CreditsTuple). */
export interface CreditsLine {
  remaining: number;
  refillAmount: number;
  refillDay: number;
  lastRefillAtMs: number;
}

export interface RecordOf {
  workspace: WorkspaceRecord;
  migration: MigrationRecord;
  root_key: RootKeyRecord;
  api: ApiRecord;
  permission: PermissionRecord;
  role: RoleRecord;
  identity: IdentityRecord;
  ratelimit_namespace: NamespaceRecord;
  ratelimit_override: OverrideRecord;
  key: KeyRecord;
}

export type RecordLine = { [K in Kind]: { type: K; record: RecordOf[K]; credits?: CreditsLine } }[Kind];
export interface Header {
  type: typeof FORMAT;
  version: number;
  workspaceId?: string;
}
export interface End {
  type: 'end';
  counts: Counts;
}

export class TransferError extends Error {}

// ── checking a line ─────────────────────────────────────────────────────────────────────
// Each record's fields are checked against what the store's readers (the native engine
// included, which reads key records field by field) take; fields not listed pass as they are.

type Field = 'id' | 'text' | 'int' | 'count' | 'duration' | 'byteLength' | 'bool' | 'hash' | 'texts' | 'ratelimits' | 'vault';
type Spec = Readonly<Record<string, Field | `${Field}?`>>;

const RECORD = { id: 'id', createdAtMs: 'int' } as const;
const OWNED = { ...RECORD, workspaceId: 'id' } as const;
const LIMITED = { ratelimits: 'ratelimits', metaJson: 'text?' } as const;

const SPECS: Readonly<Record<Kind, Spec>> = {
  workspace: RECORD,
  migration: { ...OWNED, algorithm: 'text' },
  root_key: { ...OWNED, hash: 'hash', start: 'text', permissions: 'texts' },
  api: { ...OWNED, name: 'text', deletedAtMs: 'int?' },
  permission: { ...OWNED, slug: 'text', name: 'text', description: 'text?' },
  role: { ...OWNED, name: 'text', description: 'text?', permissions: 'texts' },
  identity: { ...OWNED, ...LIMITED, externalId: 'text' },
  ratelimit_namespace: { ...OWNED, name: 'text' },
  ratelimit_override: { ...RECORD, namespaceId: 'id', identifier: 'text', limit: 'count', durationMs: 'duration' },
  key: {
    ...OWNED,
    ...LIMITED,
    apiId: 'id',
    hash: 'hash',
    start: 'text',
    prefix: 'text?',
    byteLength: 'byteLength',
    enabled: 'bool',
    updatedAtMs: 'int?',
    name: 'text?',
    expiresAtMs: 'int?',
    identityId: 'id?',
    externalId: 'text?',
    permissions: 'texts',
    roleIds: 'texts',
    vault: 'vault?',
  },
};

/** A spec as the checks run it: [field name, kind, optional]. */
type Checks = readonly (readonly [string, Field, boolean])[];
const compile = (spec: Spec): Checks => Object.entries(spec).map(([name, want]) => [name, want.replace('?', '') as Field, want.endsWith('?')]);

const CHECKS = Object.fromEntries(Object.entries(SPECS).map(([kind, spec]) => [kind, compile(spec)])) as Readonly<Record<Kind, Checks>>;
const RATELIMIT = compile({ id: 'id', name: 'text', limit: 'count', durationMs: 'duration', autoApply: 'bool' });
const VAULT = compile({ iv: 'text', tag: 'text', data: 'text' });
const CREDITS = compile({ remaining: 'int', refillAmount: 'int', refillDay: 'int', lastRefillAtMs: 'int' });

/** Ids are used inside index keys (`role_key/<roleId>/<keyId>`): no separators, and short. */
const ID = /^[A-Za-z0-9_-]{1,128}$/;
/** base64 of a SHA-256 (or of a migrated key's 32-byte placeholder). */
const HASH = /^[A-Za-z0-9+/]{43}=$/;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function fieldProblem(value: unknown, field: Field): string | undefined {
  switch (field) {
    case 'id':
      return typeof value === 'string' && ID.test(value) ? undefined : 'an id (1-128 letters, digits, _ or -)';
    case 'text':
      return typeof value === 'string' ? undefined : 'a string';
    case 'int':
      return Number.isSafeInteger(value) ? undefined : 'a whole number';
    case 'count':
      return Number.isSafeInteger(value) && (value as number) >= 0 ? undefined : 'a whole number, 0 or more';
    case 'duration':
      return Number.isSafeInteger(value) && (value as number) >= 1_000 ? undefined : 'a whole number of milliseconds, 1000 or more';
    case 'byteLength':
      return Number.isSafeInteger(value) && (value as number) >= 16 && (value as number) <= 255 ? undefined : 'a whole number from 16 to 255';
    case 'bool':
      return typeof value === 'boolean' ? undefined : 'true or false';
    case 'hash':
      return typeof value === 'string' && HASH.test(value) ? undefined : 'the base64 of a 32-byte hash';
    case 'texts':
      return Array.isArray(value) && value.every((v) => typeof v === 'string') ? undefined : 'an array of strings';
    case 'ratelimits':
      return Array.isArray(value) && value.every((v) => specProblem(v, RATELIMIT) === undefined) ? undefined : 'an array of {id,name,limit (0 or more),durationMs (1000 or more),autoApply}';
    case 'vault':
      return specProblem(value, VAULT) === undefined ? undefined : 'an object {iv,tag,data} of strings';
  }
}

function specProblem(value: unknown, checks: Checks): string | undefined {
  if (!isObject(value)) return 'is not an object';
  for (const [name, field, optional] of checks) {
    const v = value[name];
    if (v === undefined && optional) continue;
    const problem = fieldProblem(v, field);
    if (problem !== undefined) return `field ${name} must be ${problem}`;
  }
  return undefined;
}

function creditsProblem(c: unknown): string | undefined {
  const shape = specProblem(c, CREDITS);
  if (shape !== undefined || !isObject(c)) return shape;
  const { remaining, refillAmount, refillDay } = c as unknown as CreditsLine;
  if (remaining < 0) return 'remaining must be 0 or more';
  if (refillAmount !== -1 && refillAmount < 1) return 'refillAmount must be -1 (no refill) or 1 or more';
  return refillDay >= 0 && refillDay <= 31 ? undefined : 'refillDay must be 0 (daily) to 31';
}

const isKind = (type: unknown): type is Kind => typeof type === 'string' && (KINDS as readonly string[]).includes(type);

/** A line of an export, checked; throws TransferError naming the line. */
export function parseLine(text: string, lineNo: number): Header | RecordLine | End {
  const fail = (problem: string): never => {
    throw new TransferError(`line ${lineNo}: ${problem}`);
  };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return fail(`does not parse as JSON (${(err as Error).message})`);
  }
  if (!isObject(value)) return fail('is not a JSON object');
  const { type } = value;
  if (type === FORMAT) return value as unknown as Header;
  if (type === 'end') {
    const counts = zeroCounts();
    const given = value.counts;
    if (!isObject(given) || Object.keys(counts).some((name) => !Number.isSafeInteger(given[name]))) return fail(`the end line's counts must give ${Object.keys(counts).join(', ')}`);
    return { type, counts: given as unknown as Counts };
  }
  if (!isKind(type)) return fail(`unknown type ${JSON.stringify(type)} (a keyward export has ${[FORMAT, ...KINDS, 'end'].join(', ')})`);
  const problem = specProblem(value.record, CHECKS[type]);
  if (problem !== undefined) return fail(`the ${type} record ${problem}`);
  if (value.credits !== undefined) {
    if (type !== 'key') return fail(`a ${type} has no credits`);
    const bad = creditsProblem(value.credits);
    if (bad !== undefined) return fail(`the credits: ${bad}`);
  }
  return value as unknown as RecordLine;
}

/** The line of a record (`credits` only for keys that have them). */
export function formatLine(line: RecordLine | Header | End): string {
  return JSON.stringify(line) + '\n';
}

/** The same JSON value, whatever the order of object keys (a record read back from the store vs. the file's). */
export function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((v, i) => sameValue(v, b[i]));
  if (!isObject(a) || !isObject(b) || Array.isArray(b)) return false;
  const keys = Object.keys(a).filter((k) => a[k] !== undefined);
  return keys.length === Object.keys(b).filter((k) => b[k] !== undefined).length && keys.every((k) => sameValue(a[k], b[k]));
}
