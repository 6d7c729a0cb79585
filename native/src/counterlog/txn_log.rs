//! What the current write transaction of a thread did to the log (`TxnLog`), kept by this
//! module per thread: made ready by the first use of the log in a transaction (hook.rs
//! `prepare`), read back by the transaction's later reads, applied to the index when it
//! commits and dropped when it aborts (the store's commit hook, hook.rs), idle between.
//!
//! Invariant: the log is `ready` only inside the write transaction that readied it; every
//! end of that transaction goes through the hook, which leaves the log idle.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use super::index::{Digest, Entry, Index, Map};
use super::layout::{Key, LogState};

/// What one write transaction did to the log.
#[derive(Clone)]
pub(super) struct TxnLog {
    /// The index was read in for this transaction (`prepare`), setting the fields below.
    pub(super) ready: bool,
    pub(super) generation: u64,
    /// The id this transaction commits as (`View::snapshot_id` + 1).
    pub(super) txn_id: u64,
    /// The first sequence number of this transaction's appends.
    pub(super) first_seq: u64,
    pub(super) next_seq: u64,
    pub(super) gc_after: u64,
    /// The index's `gc_debt` when the transaction began, then after `before_commit`.
    pub(super) gc_debt: usize,
    pub(super) appended: usize,
    /// The stored `LogState` when the transaction began, then as `before_commit` leaves it.
    pub(super) state: LogState,
    /// The highest sequence number it deleted (garbage, a stale window or a removed counter), 0 for none.
    pub(super) deleted_high: u64,
    /// The live counters it removed (`remove`), with the sequence number each had.
    pub(super) removed: Vec<(Key, u64)>,
    /// Per changed key, its entry after this transaction (None: removed).
    pub(super) changes: Map<Option<Entry>>,
    /// The latest time a hot call of this transaction decided at (`note_time`; 0: none).
    /// The garbage visits paid before its commit delete the windows stale at that time too,
    /// so the log keeps up with new identifiers however fast they come (see `before_commit`).
    pub(super) now_ms: i64,
}

impl TxnLog {
    /// The log of no transaction.
    pub(super) const IDLE: TxnLog = TxnLog {
        ready: false,
        generation: 0,
        txn_id: 0,
        first_seq: 0,
        next_seq: 0,
        gc_after: 0,
        gc_debt: 0,
        appended: 0,
        state: LogState { high: 0, removals: 0 },
        deleted_high: 0,
        removed: Vec::new(),
        changes: HashMap::with_hasher(BuildHasherDefault::new()),
        now_ms: 0,
    };

    pub(super) fn changed(&self, key: &Key) -> Option<Option<Entry>> {
        if self.changes.is_empty() { None } else { self.changes.get(&Digest(*key)).copied() }
    }
}

/// The largest changes table a thread keeps between transactions.
pub(super) const MAX_SPARE_CHANGES: usize = 4096;

thread_local! {
    /// This thread's `TxnLog`: ready from `prepare` until its transaction ends, when the hook
    /// (`commit`, `aborted`) leaves it idle.
    static TXN_LOG: RefCell<TxnLog> = const { RefCell::new(TxnLog::IDLE) };
    /// The `changes` table of this thread's last committed transaction, emptied, for the next
    /// one: a turn's batch changes a hundred or more counters, and a table grown anew each
    /// time (allocated again at every doubling) cost more than the changes themselves.
    pub(super) static SPARE_CHANGES: Cell<Map<Option<Entry>>> = Cell::new(Map::default());
    /// The batch's `TxnLog` when a transaction nested in it began (hook.rs `savepoint`).
    static SAVED: RefCell<Option<TxnLog>> = const { RefCell::new(None) };
}

/// Keeps a copy of this thread's `TxnLog` (a nested transaction begins).
pub(super) fn save() {
    let copy = with_log(|l| l.clone());
    SAVED.with(|s| *s.borrow_mut() = Some(copy));
}

/// The copy `save` kept, if any, taken.
pub(super) fn take_saved() -> Option<TxnLog> {
    SAVED.with(|s| s.borrow_mut().take())
}

/// Puts `log` in place of this thread's `TxnLog`; the one it replaced.
pub(super) fn replace(log: TxnLog) -> TxnLog {
    TXN_LOG.with(|l| std::mem::replace(&mut *l.borrow_mut(), log))
}

/// Runs `f` with this thread's `TxnLog`. `f` must not call back into the log.
pub(super) fn with_log<R>(f: impl FnOnce(&mut TxnLog) -> R) -> R {
    TXN_LOG.with(|l| f(&mut l.borrow_mut()))
}

/// Takes this thread's `TxnLog`, leaving it idle (the transaction ended).
pub(super) fn take() -> TxnLog {
    TXN_LOG.with(|l| std::mem::replace(&mut *l.borrow_mut(), TxnLog::IDLE))
}

/// The entry of the counter `key` as this thread sees it: changed by its write transaction
/// (a read of the batch's own change is noted, store::note_uncommitted_read), else as
/// committed (`index`).
pub(super) fn current(index: &Index, key: &Key) -> Option<Entry> {
    match with_log(|l| l.changed(key)) {
        Some(changed) => {
            crate::store::note_uncommitted_read();
            changed
        }
        None => index.live.get(key).copied(),
    }
}
