// store/db.ts reads through one scratch Buffer per thread (native.getInto): each value read is
// its own, whatever is read after it, and values longer than the scratch are read whole.
import { describe, expect, it } from 'vitest';
import { tempStore } from '../helpers/tempStore.js';
import { direct, getBytes, getNumber, getRecord, getText, has, putNumber, putRecord, putText } from '../../src/store/db.js';

tempStore('keyward-reads-');

describe('store reads through the scratch', () => {
  it('records, bytes, text and numbers read one after another stay as they were read', () => {
    direct.transact(() => {
      putRecord('apis', 'a', { id: 'a', name: 'first', blob: Buffer.from([1, 2, 3]) });
      putRecord('apis', 'b', { id: 'b', name: 'second', blob: Buffer.from([9, 9]) });
      putText('indexes', 'x', 'text value');
      putNumber('meta', 'n', 42.5);
    });
    const a = getRecord<{ name: string; blob: Uint8Array }>('apis', 'a');
    const bytes = getBytes('indexes', 'x');
    const b = getRecord<{ name: string; blob: Uint8Array }>('apis', 'b');
    expect(getText('indexes', 'x')).toBe('text value');
    expect(getNumber('meta', 'n')).toBe(42.5);
    expect(a?.name).toBe('first');
    // A binary field is copied out of the scratch: later reads do not change it.
    expect([...(a?.blob ?? [])]).toEqual([1, 2, 3]);
    expect([...(b?.blob ?? [])]).toEqual([9, 9]);
    expect(bytes?.toString()).toBe('text value');
    expect(getRecord('apis', 'missing')).toBeUndefined();
    expect(getBytes('apis', 'missing')).toBeUndefined();
  });

  it('a value longer than the scratch is read whole, and shorter ones after it too', () => {
    const long = 'x'.repeat(300_000);
    direct.transact(() => putRecord('apis', 'long', { id: 'long', name: long }));
    expect(getRecord<{ name: string }>('apis', 'long')?.name).toBe(long);
    expect(direct.transact(() => getRecord<{ name: string }>('apis', 'long')?.name.length)).toBe(300_000);
    expect(getRecord<{ name: string }>('apis', 'a')?.name).toBe('first');
  });

  it('has: present (also with an empty value) or not, inside and outside a transaction', () => {
    direct.transact(() => putText('indexes', 'empty', ''));
    expect(has('indexes', 'empty')).toBe(true);
    expect(has('indexes', 'nope')).toBe(false);
    expect(direct.transact(() => (putText('indexes', 'nope', 'now'), has('indexes', 'nope')))).toBe(true);
  });
});
