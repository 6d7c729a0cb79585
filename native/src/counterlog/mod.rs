//! The counters of the hot calls: rate-limit windows (limit.rs, and the key and identity
//! limits of verify.rs) and credit balances (credits.rs). They are kept in an append-only
//! log in LMDB and read through an index in memory.
//!
//! Why: counters change at random places (a random key's credits, a random identifier's
//! window). Kept in a B-tree and changed in place, each such change copied a random leaf
//! page (LMDB is copy-on-write), and every page written between two background fsyncs had
//! to be written back and write-protected again by the next one, which stalled the serving
//! thread (README, Durability and storage). Appended instead, the changes of a commit fill
//! the same few pages at the end of one table.
//!
//! Names: a counter is named by 16 bytes (`Key`): a tag for its kind, then 15 bytes of a
//! SHA-256 of what it counts for (`named`; a limiter window: limit.rs window_key).
//!
//! Layout: table `counter_log`; key = sequence number (u64 big-endian; the next is one
//! more than the highest this process has seen, so it also grows across processes), value =
//! the counter's name (16 bytes) ‖ its 32-byte record (window.rs or credits.rs). A counter
//! is the record of its name with the highest sequence number; older records of the name are
//! garbage.
//!
//! Index: per process, name → (sequence number, record) of every live counter. It is built
//! by reading the whole log when the store is opened and is kept equal to the committed
//! log:
//! - a write transaction keeps its appends and removals in its `TxnLog`, where its own
//!   later reads find them; they reach the index under the index lock, held across
//!   mdb_txn_commit, and only if the commit succeeded, so no thread reads a counter that was
//!   not committed, nor misses one that was;
//! - records another process appended are read in before the index is read (the log's last
//!   key, or the stored `LogState::high`, is past what the index has seen), looked for only
//!   when a transaction committed since the index last caught up (`Index::synced`, by LMDB
//!   transaction id), which with one process is never;
//! - a counter another process removed (`remove`: a key's credits) cannot be seen that way:
//!   each removal is counted in `LogState::removals` and journaled in META (the counter's
//!   name and the sequence number removed, the last `JOURNAL_KEEP` of them), and an index
//!   whose count is behind takes the journaled ones out (or, when the journal no longer
//!   reaches back far enough, reads the whole log again). Stale windows the sweeper deletes
//!   are not counted: another process keeping one reads it as nothing, as it would read no
//!   window.
//!
//! Sequence numbers are never given out twice: a transaction that deleted the log's last
//! record stores the highest number given out (`LogState::high`), since the log's last key
//! alone would hand that number out again, and another process, having seen it already,
//! would never read the record that took it.
//!
//! Garbage: the commits that append pay `VISITS_PER_APPEND` visits of records per append,
//! going on from where the last visit stopped (`gc_after`, back to the start after the end),
//! and delete the garbage among them. The visits are paid in bulk, once `GC_BATCH` appends
//! are owed (`gc_debt`): a visit deletes from pages of its own, and done at every commit it
//! added them to every commit's writes (at moderate load a commit carries one or two calls).
//! The sweeper (`sweep`) visits more and also deletes
//! windows that are stale (window.rs), taking them out of the index. Both delete in
//! sequence order, so they too touch few pages. With every counter changing at random, the
//! log holds about 1 + 1/VISITS_PER_APPEND records per live counter.
//!
//! Rooms: `layout` (names, the record layout, `LogState` and the removals journal's keys),
//! `index` (the index and its catching up), `txn_log` (a transaction's `TxnLog`), `gc`
//! (garbage visits, pruning), `journal` (what a commit stores for other processes), `hook`
//! (the log's part in every write transaction, through the store's commit hook), `counters`
//! (what the rest of the crate calls: get, put, remove, the sweeper).

mod counters;
mod gc;
mod hook;
mod index;
mod journal;
mod layout;
mod txn_log;

#[cfg(test)]
mod tests;

pub use counters::{get, load, note_time, prefetch, put, remove, sweep};
pub use layout::{named, Key, CREDITS, CREDIT_LEASE, KEY_WINDOW, LIMITER_WINDOW};
