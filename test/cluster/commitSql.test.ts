// A management write's commit in PostgreSQL (src/cluster/schema.ts kw_commit, called as
// src/cluster/writer.ts commitChanges calls it): it lands only where PostgreSQL still holds
// what the node worked it out from, the records it changed and the ones it only read alike.
import { describe, expect, it } from 'vitest';
import { STALE_WRITE } from '../../src/cluster/schema.js';
import { commitChanges } from '../../src/cluster/writer.js';
import { TABLES } from '../../src/engine/tables.js';
import { migratedPostgres } from '../helpers/cluster.js';

const postgres = migratedPostgres();

const APIS = TABLES.indexOf('apis');
const KEYS = TABLES.indexOf('keys');
const COUNTER_LOG = TABLES.indexOf('counter_log');
const b = (s: string): Buffer => Buffer.from(s);
const create = (table: number, key: string, value: string) => ({ table, key: b(key), before: null, after: b(value) });
const stored = async (table: number, key: string): Promise<string | undefined> =>
  (await postgres().query<{ value: Buffer }>('SELECT value FROM kw_records WHERE tbl = $1 AND key = $2', [table, b(key)]))[0]?.value.toString();
const code = (p: Promise<unknown>): Promise<string> => p.then(() => 'committed', (err: { code?: string }) => String(err.code));

describe('kw_commit with what a write read', () => {
  it('commits only while every record it read and did not change holds what it read, and then nothing of it when one does not', async () => {
    await commitChanges(postgres(), 'a', [create(APIS, 'api_1', 'live')]);
    // Read as it is: the key is created.
    expect(await code(commitChanges(postgres(), 'b', [create(KEYS, 'key_1', 'k')], [{ table: APIS, key: b('api_1'), value: b('live') }]))).toBe('committed');
    // Another node changes the API (a deletion's tombstone, say)…
    await commitChanges(postgres(), 'a', [{ table: APIS, key: b('api_1'), before: b('live'), after: b('deleted') }]);
    // …so a write worked out from the API as it was is refused as stale, and none of it lands.
    expect(await code(commitChanges(postgres(), 'b', [create(KEYS, 'key_2', 'k')], [{ table: APIS, key: b('api_1'), value: b('live') }]))).toBe(STALE_WRITE);
    expect(await stored(KEYS, 'key_2')).toBeUndefined();
    // Read as absent: refused once it exists, taken while it does not.
    expect(await code(commitChanges(postgres(), 'b', [create(KEYS, 'key_3', 'k')], [{ table: APIS, key: b('api_1'), value: null }]))).toBe(STALE_WRITE);
    expect(await code(commitChanges(postgres(), 'b', [create(KEYS, 'key_3', 'k')], [{ table: APIS, key: b('api_gone'), value: null }]))).toBe('committed');
    // A record only this node keeps (its counter log) is not the cluster's to check.
    expect(await code(commitChanges(postgres(), 'b', [create(KEYS, 'key_4', 'k')], [{ table: COUNTER_LOG, key: b('c'), value: b('mine') }]))).toBe('committed');
    expect([await stored(KEYS, 'key_1'), await stored(KEYS, 'key_3'), await stored(KEYS, 'key_4')]).toEqual(['k', 'k', 'k']);
  });
});
