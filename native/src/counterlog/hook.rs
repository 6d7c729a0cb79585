//! The log's part in every write transaction, through the store's commit hook (store/hook.rs):
//! `prepare` readies a transaction at its first use of the log (and registers the hook),
//! `before_commit` pays the garbage visits owed and stores what other processes must know,
//! `commit` applies the transaction's changes to the index under the index lock, held across
//! mdb_txn_commit and only when it succeeded, and `aborted` forgets them. A transaction nested
//! in a batch (`savepoint`) keeps a copy of the batch's log, put back if it is discarded.

use crate::store::{self, CommitHook, Committed, StoreError, View};

use super::gc::{collect, prune_locked, GC_BATCH, PRUNE_SLOTS_PER_APPEND, VISITS_PER_APPEND};
use super::index::lock;
use super::journal::save_state;
use super::txn_log::{self, with_log, TxnLog, MAX_SPARE_CHANGES, SPARE_CHANGES};

type Result<T> = std::result::Result<T, StoreError>;

/// What the store calls at the ends of every write transaction (registered by `prepare`).
static HOOK: CommitHook = CommitHook { before_commit, commit, aborted, savepoint, release, rollback };

/// Readies this thread's write transaction for the log: the index is current and the
/// transaction knows its next sequence number. Once per transaction.
///
/// The log is ready only inside the transaction that readied it (txn_log.rs), so a ready log
/// is this transaction's; and the hook is registered before the first log is readied, so
/// that the end of every transaction that used the log goes through it.
pub(super) fn prepare(v: &View<'_>) -> Result<()> {
    if with_log(|l| l.ready) {
        return Ok(());
    }
    if !store::in_transaction() {
        return Err(StoreError::NotInTxn);
    }
    store::set_commit_hook(&HOOK);
    let mut index = lock();
    let state = index.refresh(v)?;
    with_log(|l| {
        let next_seq = index.high + 1;
        let changes = SPARE_CHANGES.take();
        *l = TxnLog { ready: true, generation: index.generation, txn_id: v.snapshot_id() + 1, first_seq: next_seq, next_seq, gc_after: index.gc_after, gc_debt: index.gc_debt, state, changes, ..TxnLog::IDLE };
    });
    Ok(())
}

/// Before a write transaction commits (the hook): the garbage visits owed for its appends
/// and the earlier ones, once `GC_BATCH` are owed; then the `LogState` it changed.
///
/// When hot calls told it the time, the visits delete the windows stale then as well: each
/// append pays `VISITS_PER_APPEND` visits, so the visits go round the log at least three
/// times as fast as it grows, and a window nobody calls again (a new identifier per call,
/// a deleted key's window) is deleted within about one round after its last bucket ended.
/// The log then holds at most about 3 × duration × (new windows per second) records,
/// where the sweeper's fixed pace alone let it grow without bound under such load.
fn before_commit() -> Result<()> {
    let (owed, now_ms) = with_log(|l| (if l.ready && l.appended > 0 { l.gc_debt + l.appended } else { 0 }, l.now_ms));
    if owed > 0 {
        let pay = owed >= GC_BATCH;
        if pay {
            collect(owed * VISITS_PER_APPEND, (now_ms > 0).then_some(now_ms))?;
            // With another process on the store, the windows it deletes stay in this index
            // until pruned; pruned at the pace of this process's appends, the index keeps up
            // (each append adds at most one entry, about 1.4 slots).
            if now_ms > 0 {
                let budget = owed * PRUNE_SLOTS_PER_APPEND;
                let mut index = lock();
                if index.foreign_prune > 0 {
                    index.foreign_prune = index.foreign_prune.saturating_sub(budget);
                    prune_locked(&mut index, now_ms, budget);
                }
            }
        }
        with_log(|l| l.gc_debt = if pay { 0 } else { owed });
    }
    save_state()
}

/// Commits a write transaction with `commit` (mdb_txn_commit) and, when it succeeded,
/// applies what the transaction did to the log to the index. The index lock is held across
/// the commit (see the module comment of counterlog/).
fn commit(commit: &mut dyn FnMut() -> Committed) -> Committed {
    let log = txn_log::take();
    if !log.ready {
        return commit();
    }
    let mut index = lock();
    // A transaction that wrote nothing commits no new id (LMDB), so it says nothing of `synced`.
    let wrote = !log.changes.is_empty() || log.deleted_high > 0;
    let committed = commit();
    if committed.is_ok() && index.generation == log.generation {
        let mut changes = log.changes;
        for (key, change) in changes.drain() {
            match change {
                Some(entry) => {
                    index.live.insert(&key.0, entry);
                }
                None => {
                    index.live.remove(&key.0);
                }
            }
        }
        index.high = index.high.max(log.next_seq - 1);
        // Prepared under the writer lock, the index held everything up to this commit.
        if wrote {
            (index.synced, index.state) = (log.txn_id, log.state);
        }
        index.gc_after = log.gc_after;
        index.gc_debt = log.gc_debt;
        // One of a large management transaction is not kept: draining walks its whole table.
        if changes.capacity() <= MAX_SPARE_CHANGES {
            SPARE_CHANGES.set(changes);
        }
    }
    committed
}

/// The transaction ended without a commit: what it did to the log is forgotten.
fn aborted() {
    drop(txn_log::take());
    drop(txn_log::take_saved());
}

/// A transaction nested in the batch begins: the batch's log as it is now is kept.
fn savepoint() {
    txn_log::save();
}

/// The nested transaction was merged into the batch: its log is the batch's now.
fn release() {
    drop(txn_log::take_saved());
}

/// The nested transaction was discarded: the batch's log is as it was at `savepoint` (idle
/// when the log was first used inside the nested transaction, which registered the hook).
fn rollback() {
    let saved = txn_log::take_saved().unwrap_or(TxnLog::IDLE);
    drop(txn_log::replace(saved));
}
