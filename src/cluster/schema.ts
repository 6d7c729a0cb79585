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
//   kw_credits   each limited key's balance: what is not leased to any node (`balance`), a
//                decrement the balance could not cover yet (`debt`, paid from leases as they
//                come back), the epoch (a set or a refill starts a new one, voiding the
//                leases of the one before) and the refill settings. Records of table 100 in
//                kw_records and the log carry it as five big-endian int8 (kw_credits_value).
//   kw_leases    what each node was granted and gave back of a key under an epoch, as totals
//                (a grant or a return repeated after a crash counts once), and its grant
//                total when it last gave back all it held (`settled`: what it may hold now is
//                at most granted − settled); a lease not renewed for the lease TTL is counted
//                as spent (its node is gone).
//   kw_charges   credits nodes let through while PostgreSQL was away (KEYWARD_CLUSTER_
//                CREDITS_OFFLINE=allow), each charged once by its id.
//
// kw_commit(node, tables, keys, befores, afters, read tables, read keys, read values) applies
// one management write: each key only if PostgreSQL still holds the value the node computed
// from (`before`; null: absent), and only if every key it read and did not write still holds
// the value it read, else SQLSTATE KW409 and nothing of it is applied; credits (table 100)
// are set as they are, in a new epoch. Then it appends the changes to the log and NOTIFYs kw_changes with the last
// sequence number. The kw_credits_* functions are the leases' protocol (credits.ts).
import type { Postgres } from './postgres.js';

/** SQLSTATE of a write computed from a state PostgreSQL no longer holds. */
export const STALE_WRITE = 'KW409';

/** The table id of credits in kw_records and the log (native/src/api/credits.rs CREDITS_WRITES). */
const CREDITS = 100;

const MIGRATIONS: readonly string[] = [
  `CREATE TABLE kw_records (tbl smallint NOT NULL, key bytea NOT NULL, value bytea NOT NULL, PRIMARY KEY (tbl, key));
   CREATE TABLE kw_changes (seq bigint PRIMARY KEY, tbl smallint NOT NULL, key bytea NOT NULL, value bytea, node text NOT NULL, at timestamptz NOT NULL DEFAULT now());
   CREATE TABLE kw_head (one boolean PRIMARY KEY DEFAULT true CHECK (one), seq bigint NOT NULL);
   INSERT INTO kw_head VALUES (true, 0);
   CREATE TABLE kw_nodes (node text PRIMARY KEY, applied_seq bigint NOT NULL DEFAULT 0, seen_at timestamptz NOT NULL DEFAULT now());
   CREATE TABLE kw_cluster (one boolean PRIMARY KEY DEFAULT true CHECK (one), id text NOT NULL);
   INSERT INTO kw_cluster VALUES (true, md5(random()::text || clock_timestamp()::text));
   CREATE TABLE kw_credits (key_id bytea PRIMARY KEY, balance bigint NOT NULL CHECK (balance >= 0), debt bigint NOT NULL DEFAULT 0 CHECK (debt >= 0),
     epoch bigint NOT NULL, refill_amount bigint NOT NULL, refill_day bigint NOT NULL, last_refill_at bigint NOT NULL);
   CREATE TABLE kw_leases (key_id bytea NOT NULL, node text NOT NULL, epoch bigint NOT NULL, granted bigint NOT NULL, returned bigint NOT NULL,
     settled bigint NOT NULL DEFAULT 0, renewed_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (key_id, node));
   CREATE INDEX kw_leases_node ON kw_leases (node);
   CREATE TABLE kw_charges (id text PRIMARY KEY, key_id bytea NOT NULL, amount bigint NOT NULL, at timestamptz NOT NULL DEFAULT now());

   CREATE FUNCTION kw_int8(b bytea, i int) RETURNS bigint AS $$
     SELECT ('x' || encode(substring(b FROM i * 8 + 1 FOR 8), 'hex'))::bit(64)::bigint
   $$ LANGUAGE sql IMMUTABLE STRICT;
   CREATE FUNCTION kw_credits_value(c kw_credits) RETURNS bytea AS $$
     SELECT int8send(c.balance) || int8send(c.refill_amount) || int8send(c.refill_day) || int8send(c.last_refill_at) || int8send(c.epoch)
   $$ LANGUAGE sql IMMUTABLE;

   CREATE FUNCTION kw_append(writer text, tbls smallint[], keys bytea[], vals bytea[]) RETURNS bigint AS $$
   DECLARE
     n int := coalesce(array_length(tbls, 1), 0);
     last bigint;
   BEGIN
     UPDATE kw_head SET seq = seq + n RETURNING seq INTO last;
     INSERT INTO kw_changes (seq, tbl, key, value, node)
       SELECT last - n + ord, t, k, v, writer FROM unnest(tbls, keys, vals) WITH ORDINALITY AS c(t, k, v, ord);
     PERFORM pg_notify('kw_changes', last::text);
     RETURN last;
   END $$ LANGUAGE plpgsql;

   CREATE FUNCTION kw_credits_publish(writer text, p_key bytea) RETURNS bigint AS $$
   DECLARE
     c kw_credits;
     v bytea;
   BEGIN
     SELECT * INTO c FROM kw_credits WHERE key_id = p_key;
     v := kw_credits_value(c);
     INSERT INTO kw_records VALUES (${CREDITS}, p_key, v) ON CONFLICT (tbl, key) DO UPDATE SET value = EXCLUDED.value;
     RETURN kw_append(writer, ARRAY[${CREDITS}::smallint], ARRAY[p_key], ARRAY[v]);
   END $$ LANGUAGE plpgsql;

   CREATE FUNCTION kw_commit(writer text, tbls smallint[], keys bytea[], befores bytea[], afters bytea[]) RETURNS bigint AS $$
   DECLARE
     n int := coalesce(array_length(tbls, 1), 0);
     vals bytea[] := afters;
     hit int;
     c kw_credits;
   BEGIN
     FOR i IN 1..n LOOP
       IF tbls[i] = ${CREDITS} THEN
         IF afters[i] IS NULL THEN
           DELETE FROM kw_credits WHERE key_id = keys[i];
           DELETE FROM kw_leases WHERE key_id = keys[i];
           DELETE FROM kw_records WHERE tbl = tbls[i] AND key = keys[i];
         ELSE
           INSERT INTO kw_credits AS k VALUES (keys[i], kw_int8(afters[i], 0), 0, 1, kw_int8(afters[i], 1), kw_int8(afters[i], 2), kw_int8(afters[i], 3))
             ON CONFLICT (key_id) DO UPDATE SET balance = EXCLUDED.balance, debt = 0, epoch = k.epoch + 1,
               refill_amount = EXCLUDED.refill_amount, refill_day = EXCLUDED.refill_day, last_refill_at = EXCLUDED.last_refill_at
             RETURNING * INTO c;
           vals[i] := kw_credits_value(c);
           INSERT INTO kw_records VALUES (tbls[i], keys[i], vals[i]) ON CONFLICT (tbl, key) DO UPDATE SET value = EXCLUDED.value;
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
     RETURN kw_append(writer, tbls, keys, vals);
   END $$ LANGUAGE plpgsql;

   -- What the leases of a key under its epoch may still hold: granted since their node last
   -- gave back all it held, by nodes that renewed them within the TTL (an upper bound: spends
   -- are not reported).
   CREATE FUNCTION kw_credits_held(p_key bytea, p_epoch bigint, p_ttl_ms bigint, p_except text) RETURNS bigint AS $$
     SELECT coalesce(sum(granted - settled), 0)::bigint FROM kw_leases
     WHERE key_id = p_key AND epoch = p_epoch AND node IS DISTINCT FROM p_except AND renewed_at > now() - make_interval(secs => p_ttl_ms / 1000.0)
   $$ LANGUAGE sql STABLE;

   -- A node's lease cannot pay p_cost: refills the balance when its refill (p_refill_at, the
   -- boundary the node saw due) has not been applied yet, then grants a lease of up to
   -- p_want (never more than balance / (2 × live nodes)); when none can be granted and p_pay,
   -- pays p_cost from the balance (the synchronous tail), else refuses. Outcomes: lease
   -- (granted: the node's total under epoch), paid, refused (others: what other nodes' leases
   -- may hold, recalled), none (p_pay false), unlimited (the key has no credits). seq: the
   -- change a refill published (0: none).
   CREATE FUNCTION kw_credits_take(p_node text, p_key bytea, p_cost bigint, p_want bigint, p_pay boolean, p_refill_at bigint, p_now bigint, p_ttl_ms bigint)
   RETURNS TABLE (outcome text, epoch bigint, granted bigint, balance bigint, others bigint, seq bigint) AS $$
   DECLARE
     c kw_credits;
     nodes bigint;
     g bigint;
     total bigint;
     s bigint := 0;
     held bigint;
     theirs bigint;
   BEGIN
     SELECT * INTO c FROM kw_credits k WHERE k.key_id = p_key FOR UPDATE;
     IF NOT FOUND THEN
       RETURN QUERY SELECT 'unlimited'::text, 0::bigint, 0::bigint, 0::bigint, 0::bigint, 0::bigint;
       RETURN;
     END IF;
     held := kw_credits_held(p_key, c.epoch, p_ttl_ms, NULL);
     IF p_refill_at IS NOT NULL AND c.refill_amount > 0 AND c.last_refill_at < p_refill_at THEN
       IF c.balance + held - c.debt < c.refill_amount THEN
         c.epoch := c.epoch + 1;
         c.balance := c.refill_amount;
         c.debt := 0;
         held := 0;
       END IF;
       c.last_refill_at := p_now;
       UPDATE kw_credits k SET balance = c.balance, debt = c.debt, epoch = c.epoch, last_refill_at = c.last_refill_at WHERE k.key_id = p_key;
       s := kw_credits_publish(p_node, p_key);
     END IF;
     SELECT greatest(count(*), 1) INTO nodes FROM kw_nodes WHERE seen_at > now() - interval '10 seconds';
     IF c.debt = 0 AND p_want > 0 THEN
       g := least(p_want, c.balance / (2 * nodes));
       IF g >= greatest(p_cost, 1) THEN
         UPDATE kw_credits k SET balance = k.balance - g WHERE k.key_id = p_key RETURNING k.balance INTO c.balance;
         INSERT INTO kw_leases AS l (key_id, node, epoch, granted, returned) VALUES (p_key, p_node, c.epoch, g, 0)
           ON CONFLICT (key_id, node) DO UPDATE SET
             granted = CASE WHEN l.epoch = EXCLUDED.epoch THEN l.granted + g ELSE g END,
             returned = CASE WHEN l.epoch = EXCLUDED.epoch THEN l.returned ELSE 0 END,
             settled = CASE WHEN l.epoch = EXCLUDED.epoch THEN l.settled ELSE 0 END,
             epoch = EXCLUDED.epoch, renewed_at = now()
           RETURNING l.granted INTO total;
         RETURN QUERY SELECT 'lease'::text, c.epoch, total, c.balance, 0::bigint, s;
         RETURN;
       END IF;
     END IF;
     IF NOT p_pay THEN
       RETURN QUERY SELECT 'none'::text, c.epoch, 0::bigint, c.balance, 0::bigint, s;
       RETURN;
     END IF;
     -- The tail: other nodes give back what their leases hold, so none is stranded there.
     theirs := kw_credits_held(p_key, c.epoch, p_ttl_ms, p_node);
     IF theirs > 0 THEN
       PERFORM pg_notify('kw_credits_recall', encode(p_key, 'escape'));
     END IF;
     IF c.balance > 0 AND c.balance >= p_cost THEN
       UPDATE kw_credits k SET balance = k.balance - p_cost WHERE k.key_id = p_key RETURNING k.balance INTO c.balance;
       RETURN QUERY SELECT 'paid'::text, c.epoch, 0::bigint, c.balance, theirs, s;
       RETURN;
     END IF;
     IF c.debt > 0 AND held = 0 THEN
       -- A decrement beyond what was left: nothing more can come back to pay it (floors at 0).
       UPDATE kw_credits k SET debt = 0 WHERE k.key_id = p_key;
     END IF;
     RETURN QUERY SELECT 'refused'::text, c.epoch, 0::bigint, c.balance, theirs, s;
   END $$ LANGUAGE plpgsql;

   -- A node gives back its lease: p_returned is its total given back under p_epoch (a total
   -- counted already adds nothing), p_granted the grant total it had when it did (it held
   -- nothing of those then). Pays the debt first. A balance that was 0 is published
   -- (nodes that saw it exhausted refuse alone until a change arrives). Returns the balance
   -- (null: no credits).
   CREATE FUNCTION kw_credits_return(p_node text, p_key bytea, p_epoch bigint, p_returned bigint, p_granted bigint) RETURNS bigint AS $$
   DECLARE
     c kw_credits;
     l kw_leases;
     back bigint;
     pay bigint;
   BEGIN
     SELECT * INTO c FROM kw_credits k WHERE k.key_id = p_key FOR UPDATE;
     IF NOT FOUND THEN
       RETURN NULL;
     END IF;
     SELECT * INTO l FROM kw_leases k WHERE k.key_id = p_key AND k.node = p_node FOR UPDATE;
     IF FOUND AND l.epoch = p_epoch AND c.epoch = p_epoch THEN
       UPDATE kw_leases k SET settled = greatest(l.settled, least(p_granted, l.granted)), renewed_at = now() WHERE k.key_id = p_key AND k.node = p_node;
       back := least(p_returned, l.granted) - l.returned;
       IF back > 0 THEN
         pay := least(c.debt, back);
         UPDATE kw_credits k SET balance = k.balance + back - pay, debt = k.debt - pay WHERE k.key_id = p_key;
         UPDATE kw_leases k SET returned = l.returned + back WHERE k.key_id = p_key AND k.node = p_node;
         IF c.balance = 0 AND back > pay THEN
           PERFORM kw_credits_publish(p_node, p_key);
         END IF;
         c.balance := c.balance + back - pay;
       END IF;
     END IF;
     RETURN c.balance;
   END $$ LANGUAGE plpgsql;

   -- Credits paid (kw_credits_take) for a call that did not spend them go back, when the
   -- epoch they were paid in is still the balance's (published when the balance was 0, as
   -- kw_credits_return does). Returns the balance (null: no credits).
   CREATE FUNCTION kw_credits_refund(p_node text, p_key bytea, p_epoch bigint, p_amount bigint) RETURNS bigint AS $$
   DECLARE
     c kw_credits;
     pay bigint;
   BEGIN
     SELECT * INTO c FROM kw_credits k WHERE k.key_id = p_key AND k.epoch = p_epoch FOR UPDATE;
     IF NOT FOUND THEN
       RETURN NULL;
     END IF;
     pay := least(c.debt, p_amount);
     UPDATE kw_credits k SET balance = k.balance + p_amount - pay, debt = k.debt - pay WHERE k.key_id = p_key;
     IF c.balance = 0 AND p_amount > pay THEN
       PERFORM kw_credits_publish(p_node, p_key);
     END IF;
     RETURN c.balance + p_amount - pay;
   END $$ LANGUAGE plpgsql;

   -- keys.updateCredits increment or decrement (decrement floors at 0). What the balance cannot
   -- cover of a decrement becomes debt, paid from the leases as they come back (they are
   -- recalled); a decrement of at least all there may be (the balance and every lease) sets
   -- the balance to 0 in a new epoch, which voids the leases at once. Publishes the balance;
   -- returns the change's sequence number (null: the key has no credits).
   CREATE FUNCTION kw_credits_adjust(p_node text, p_key bytea, p_delta bigint, p_ttl_ms bigint) RETURNS bigint AS $$
   DECLARE
     c kw_credits;
   BEGIN
     SELECT * INTO c FROM kw_credits k WHERE k.key_id = p_key FOR UPDATE;
     IF NOT FOUND THEN
       RETURN NULL;
     END IF;
     IF p_delta >= 0 THEN
       UPDATE kw_credits k SET balance = least(k.balance + p_delta, 9007199254740991) WHERE k.key_id = p_key;
     ELSIF c.balance >= -p_delta THEN
       UPDATE kw_credits k SET balance = k.balance + p_delta WHERE k.key_id = p_key;
     ELSIF c.balance + kw_credits_held(p_key, c.epoch, p_ttl_ms, NULL) - c.debt <= -p_delta THEN
       UPDATE kw_credits k SET balance = 0, debt = 0, epoch = k.epoch + 1 WHERE k.key_id = p_key;
     ELSE
       UPDATE kw_credits k SET debt = k.debt - p_delta - k.balance, balance = 0 WHERE k.key_id = p_key;
       PERFORM pg_notify('kw_credits_recall', encode(p_key, 'escape'));
     END IF;
     RETURN kw_credits_publish(p_node, p_key);
   END $$ LANGUAGE plpgsql;

   -- Credits a node let through while PostgreSQL was away, charged once by p_id (a decrement
   -- that floors at 0). Returns the balance (null: no credits, or charged before).
   CREATE FUNCTION kw_credits_charge(p_id text, p_key bytea, p_amount bigint) RETURNS bigint AS $$
   DECLARE
     c kw_credits;
   BEGIN
     INSERT INTO kw_charges (id, key_id, amount) VALUES (p_id, p_key, p_amount) ON CONFLICT (id) DO NOTHING;
     IF NOT FOUND THEN
       RETURN NULL;
     END IF;
     SELECT * INTO c FROM kw_credits k WHERE k.key_id = p_key FOR UPDATE;
     IF NOT FOUND THEN
       RETURN NULL;
     END IF;
     UPDATE kw_credits k SET balance = greatest(k.balance - p_amount, 0), debt = k.debt + greatest(p_amount - k.balance, 0) WHERE k.key_id = p_key RETURNING k.balance INTO c.balance;
     RETURN c.balance;
   END $$ LANGUAGE plpgsql;`,
  // 2: kw_commit also checks what the write read and did not change (rtbls, rkeys, rvals; a
  // null value: read as absent), each still as the node read it, and holds those rows (FOR
  // SHARE) to the commit, so that no write changes them between the check and the commit.
  // The rows it changes are locked first (FOR UPDATE): a write that read one of them and
  // checks it later waits for this one and then finds it changed; and a write that read
  // them first has committed by the time these checks run, which then see what it wrote.
  `CREATE FUNCTION kw_commit(writer text, tbls smallint[], keys bytea[], befores bytea[], afters bytea[], rtbls smallint[], rkeys bytea[], rvals bytea[]) RETURNS bigint AS $$
   BEGIN
     PERFORM 1 FROM kw_records r JOIN unnest(tbls, keys) AS w(t, k) ON r.tbl = w.t AND r.key = w.k ORDER BY r.tbl, r.key FOR UPDATE OF r;
     FOR i IN 1..coalesce(array_length(rtbls, 1), 0) LOOP
       IF rvals[i] IS NULL THEN
         PERFORM 1 FROM kw_records WHERE tbl = rtbls[i] AND key = rkeys[i];
       ELSE
         PERFORM 1 FROM kw_records WHERE tbl = rtbls[i] AND key = rkeys[i] AND value = rvals[i] FOR SHARE;
       END IF;
       IF FOUND = (rvals[i] IS NULL) THEN
         RAISE EXCEPTION 'stale write: table % key % changed since the node read it', rtbls[i], encode(rkeys[i], 'escape') USING ERRCODE = 'KW409';
       END IF;
     END LOOP;
     RETURN kw_commit(writer, tbls, keys, befores, afters);
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
