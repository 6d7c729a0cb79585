// `keyward cluster seed --data-dir DIR`: a single node's store loaded into an empty cluster,
// the way from one node to many. Every replicated record of the store (and every key's
// credits) goes into kw_records in one PostgreSQL transaction; the log head moves past them
// without logging them one by one, so the nodes, which start with empty data dirs, load them
// from a snapshot.
import { native } from '../engine/native.js';
import type { Table } from '../engine/tables.js';
import { scanPrefix } from '../store/db.js';
import { CREDITS, encodeCredits, REPLICATED_META_PREFIXES, REPLICATED_TABLES } from './changes.js';
import type { Postgres } from './postgres.js';

/** Rows per INSERT. */
const CHUNK = 5_000;

interface Rows {
  tbls: number[];
  keys: Buffer[];
  values: Buffer[];
}

/** Every record of `table` as stored, in key order, chunk by chunk. */
function* entries(table: Table): Generator<[Buffer, Buffer]> {
  let from: Buffer = Buffer.alloc(0);
  for (;;) {
    const flat = native.range(table, from, null, CHUNK + 1);
    for (let i = 0; i + 1 < flat.length && i < CHUNK * 2; i += 2) yield [flat[i] as Buffer, flat[i + 1] as Buffer];
    if (flat.length <= CHUNK * 2) return;
    from = flat[CHUNK * 2] as Buffer;
  }
}

/** The open store's replicated records, as kw_records rows. */
function* storeRows(nowMs: number): Generator<[number, Buffer, Buffer]> {
  for (const table of REPLICATED_TABLES) {
    const id = TABLE_IDS.get(table) as number;
    for (const [key, value] of entries(table)) yield [id, key, value];
  }
  for (const prefix of REPLICATED_META_PREFIXES) {
    for (const e of scanPrefix('meta', prefix, undefined, Number.MAX_SAFE_INTEGER)) yield [TABLE_IDS.get('meta') as number, Buffer.from(e.key, 'utf8'), e.value];
  }
  for (const [keyId] of entries('keys')) {
    const c = native.creditsGet(keyId.toString('utf8'), nowMs);
    if (c === undefined) continue;
    yield [CREDITS, keyId, encodeCredits({ balance: c[0], refillAmount: c[1], refillDay: c[2], lastRefillAtMs: c[3], epoch: 1 })];
  }
}

const TABLE_IDS: ReadonlyMap<Table, number> = new Map(native.tables().map((name, id) => [name as Table, id]));

/**
 * Loads the open store into the cluster, which must be empty (no record, no change yet);
 * returns the number of rows loaded.
 */
export async function seedCluster(pg: Postgres, nowMs: number): Promise<number> {
  return pg.session(async (q) => {
    await q('BEGIN');
    try {
      await q('LOCK TABLE kw_head IN EXCLUSIVE MODE');
      const [head] = await q<{ seq: string }>('SELECT seq FROM kw_head');
      const [any] = await q<{ n: number }>('SELECT count(*)::int AS n FROM (SELECT 1 FROM kw_records LIMIT 1) AS r');
      if (Number(head?.seq ?? 0) !== 0 || (any?.n ?? 0) > 0) throw new Error('the cluster is not empty: seed only a cluster no node has written to (its first node bootstraps it otherwise)');
      let count = 0;
      let rows: Rows = { tbls: [], keys: [], values: [] };
      const flush = async (): Promise<void> => {
        if (rows.tbls.length === 0) return;
        await q('INSERT INTO kw_records (tbl, key, value) SELECT * FROM unnest($1::smallint[], $2::bytea[], $3::bytea[])', [rows.tbls, rows.keys, rows.values]);
        // The balances the leases are granted from (epoch 1, as kw_commit starts them).
        await q(
          `INSERT INTO kw_credits (key_id, balance, debt, epoch, refill_amount, refill_day, last_refill_at)
           SELECT key, kw_int8(value, 0), 0, kw_int8(value, 4), kw_int8(value, 1), kw_int8(value, 2), kw_int8(value, 3)
           FROM unnest($1::smallint[], $2::bytea[], $3::bytea[]) AS r(tbl, key, value) WHERE tbl = $4`,
          [rows.tbls, rows.keys, rows.values, CREDITS],
        );
        count += rows.tbls.length;
        rows = { tbls: [], keys: [], values: [] };
      };
      for (const [tbl, key, value] of storeRows(nowMs)) {
        rows.tbls.push(tbl);
        rows.keys.push(key);
        rows.values.push(value);
        if (rows.tbls.length >= CHUNK) await flush();
      }
      await flush();
      await q('UPDATE kw_head SET seq = $1', [count]);
      await q("SELECT pg_notify('kw_changes', $1)", [String(count)]);
      await q('COMMIT');
      return count;
    } catch (err) {
      await q('ROLLBACK').catch(() => undefined);
      throw err;
    }
  });
}
