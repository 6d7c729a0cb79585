// store/integrity.ts checkRecords: each cross-reference a record makes is checked, and a
// dangling one is reported with its table, key and what is missing.
import { describe, expect, it } from 'vitest';
import { tempStore } from '../helpers/tempStore.js';
import { native } from '../../src/engine/native.js';
import { direct, putRecord, putText } from '../../src/store/db.js';
import { checkRecords } from '../../src/store/integrity.js';

tempStore('keyward-integrity-');

const hash = (n: number): Buffer => Buffer.alloc(32, n);

describe('checkRecords', () => {
  it('a consistent store has no problems', () => {
    direct.transact(() => {
      putRecord('workspaces', 'ws_1', { id: 'ws_1' });
      putRecord('apis', 'api_1', { id: 'api_1', workspaceId: 'ws_1' });
      putRecord('root_keys', 'rk_1', { id: 'rk_1', workspaceId: 'ws_1', hash: 'h1' });
      putText('root_key_hashes', 'h1', 'rk_1');
      putRecord('key_records', hash(1), { id: 'key_1', apiId: 'api_1' });
      native.put('keys', 'key_1', hash(1));
      putText('api_keys', 'api_1/key_1', 'key_1');
    });
    expect(checkRecords(0)).toEqual({ records: 7, complete: true, problems: [] });
  });

  it('reports every dangling reference', () => {
    direct.transact(() => {
      putRecord('apis', 'api_2', { id: 'api_2', workspaceId: 'ws_gone' });
      putRecord('root_keys', 'rk_2', { id: 'rk_2', workspaceId: 'ws_1', hash: 'h2' });
      putText('root_key_hashes', 'h3', 'rk_gone');
      // A key record whose id entry is missing, of an API that is missing, not listed.
      putRecord('key_records', hash(2), { id: 'key_2', apiId: 'api_gone' });
      // An id entry naming a missing record, and one naming another key's record.
      native.put('keys', 'key_3', hash(3));
      native.put('keys', 'key_4', hash(1));
      putText('api_keys', 'api_1/key_5', 'key_5');
    });
    expect([...checkRecords(0).problems].sort()).toEqual(
      [
        'apis api_2: names workspace ws_gone, which is missing',
        'root_keys rk_2: has no hash entry naming it',
        'root_key_hashes h3: names root key rk_gone, which is missing',
        `key_records ${hash(2).toString('base64')}: is key key_2, whose id entry is missing or names another hash`,
        'keys key_3: names a key record that is missing',
        'keys key_4: names a key record of another id',
        'api_keys api_1/key_5: lists key key_5, which is missing',
      ].sort(),
    );
  });
});
