// keyward's schema in PostgreSQL, created and upgraded by the nodes themselves: numbered
// migrations, each applied once, under an advisory lock so that nodes starting together take
// turns (the first applies, the others find it applied).
//
//   kw_records   the cluster's records: (table id, key) → value, as the nodes' stores hold
//                them. Uniqueness holds through its primary key: a write that creates a key
//                inserts it and fails when another node's write got there first.
//   kw_changes   the change log: every write's changes under increasing sequence numbers,
//                in commit order (kw_head's row lock serialises the log's appends).
//   kw_head      the last sequence number given out.
//   kw_nodes     each node's heartbeat and how far it has applied the log.
//   kw_cluster   the cluster's identity (a random id a node's store remembers).
//
// kw_commit(node, tables, keys, befores, afters, blind) applies one write: each key only if
// PostgreSQL still holds the value the node computed from (`before`; null: absent), else
// SQLSTATE KW409 and nothing of it is applied; `blind` keys are written as they are. Then it
// appends the changes to the log and NOTIFYs kw_changes with the last sequence number.
import type { Postgres } from './postgres.js';

/** SQLSTATE of a write computed from a state PostgreSQL no longer holds. */
export const STALE_WRITE = 'KW409';

const MIGRATIONS: readonly string[] = [
  `CREATE TABLE kw_records (tbl smallint NOT NULL, key bytea NOT NULL, value bytea NOT NULL, PRIMARY KEY (tbl, key));
   CREATE TABLE kw_changes (seq bigint PRIMARY KEY, tbl smallint NOT NULL, key bytea NOT NULL, value bytea, node text NOT NULL, at timestamptz NOT NULL DEFAULT now());
   CREATE TABLE kw_head (one boolean PRIMARY KEY DEFAULT true CHECK (one), seq bigint NOT NULL);
   INSERT INTO kw_head VALUES (true, 0);
   CREATE TABLE kw_nodes (node text PRIMARY KEY, applied_seq bigint NOT NULL DEFAULT 0, seen_at timestamptz NOT NULL DEFAULT now());
   CREATE TABLE kw_cluster (one boolean PRIMARY KEY DEFAULT true CHECK (one), id text NOT NULL);
   INSERT INTO kw_cluster VALUES (true, md5(random()::text || clock_timestamp()::text));
   CREATE FUNCTION kw_commit(writer text, tbls smallint[], keys bytea[], befores bytea[], afters bytea[], blind boolean[]) RETURNS bigint AS $$
   DECLARE
     n int := coalesce(array_length(tbls, 1), 0);
     hit int;
     last bigint;
   BEGIN
     FOR i IN 1..n LOOP
       IF blind[i] THEN
         IF afters[i] IS NULL THEN
           DELETE FROM kw_records WHERE tbl = tbls[i] AND key = keys[i];
         ELSE
           INSERT INTO kw_records VALUES (tbls[i], keys[i], afters[i]) ON CONFLICT (tbl, key) DO UPDATE SET value = EXCLUDED.value;
         END IF;
         CONTINUE;
       ELSIF befores[i] IS NULL THEN
         INSERT INTO kw_records VALUES (tbls[i], keys[i], afters[i]) ON CONFLICT (tbl, key) DO NOTHING;
       ELSIF afters[i] IS NULL THEN
         DELETE FROM kw_records WHERE tbl = tbls[i] AND key = keys[i] AND value = befores[i];
       ELSE
         UPDATE kw_records SET value = afters[i] WHERE tbl = tbls[i] AND key = keys[i] AND value = befores[i];
       END IF;
       GET DIAGNOSTICS hit = ROW_COUNT;
       IF hit = 0 THEN
         RAISE EXCEPTION 'stale write: table % key % changed since the node read it', tbls[i], encode(keys[i], 'escape') USING ERRCODE = 'KW409';
       END IF;
     END LOOP;
     UPDATE kw_head SET seq = seq + n RETURNING seq INTO last;
     INSERT INTO kw_changes (seq, tbl, key, value, node)
       SELECT last - n + ord, t, k, v, writer FROM unnest(tbls, keys, afters) WITH ORDINALITY AS c(t, k, v, ord);
     PERFORM pg_notify('kw_changes', last::text);
     RETURN last;
   END $$ LANGUAGE plpgsql;`,
];

/** The schema version this build needs (the number of migrations). */
export const SCHEMA_VERSION = MIGRATIONS.length;

/** Brings the schema to SCHEMA_VERSION; refuses a database a newer keyward has upgraded. */
export async function migrate(pg: Postgres): Promise<void> {
  await pg.session(async (q) => {
    await q('SELECT pg_advisory_lock(hashtext($1))', ['keyward:migrate']);
    try {
      await q('CREATE TABLE IF NOT EXISTS kw_schema (version int PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())');
      const rows = await q<{ version: number | null }>('SELECT max(version) AS version FROM kw_schema');
      const at = rows[0]?.version ?? 0;
      if (at > SCHEMA_VERSION) throw new Error(`the cluster's schema is at version ${at}, newer than this keyward's (${SCHEMA_VERSION}): upgrade this node`);
      for (let v = at + 1; v <= SCHEMA_VERSION; v++) {
        await q('BEGIN');
        try {
          await q(MIGRATIONS[v - 1] as string);
          await q('INSERT INTO kw_schema (version) VALUES ($1)', [v]);
          await q('COMMIT');
        } catch (err) {
          await q('ROLLBACK');
          throw err;
        }
      }
    } finally {
      await q('SELECT pg_advisory_unlock(hashtext($1))', ['keyward:migrate']);
    }
  });
}
