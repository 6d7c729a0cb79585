//! Garbage: the visits of records that delete the superseded ones (and, told the time,
//! the stale windows), paid by the commits that append and by the sweeper, and the pruning
//! of windows another process deleted out of this process's index (see the module comment of
//! counterlog/: "Garbage").

use std::cell::Cell;

use crate::store::{self, StoreError};
use crate::window::Window;

use super::index::{lock, Digest, Index};
use super::layout::{is_window, seq_of, split, Key, Value, LOG};
use super::txn_log::{current, with_log};

type Result<T> = std::result::Result<T, StoreError>;

pub(super) const VISITS_PER_APPEND: usize = 3;
/// Appends owed their garbage visits before a commit pays them (see the module comment).
pub(super) const GC_BATCH: usize = 64;
/// The largest garbage-visit buffer a thread keeps between transactions.
const MAX_SPARE_VISITS: usize = 4096;

thread_local! {
    /// The garbage visits' buffer, kept for the same reason as the spare changes table
    /// (txn_log.rs `SPARE_CHANGES`).
    static SPARE_VISITED: Cell<Vec<(u64, Key, Value)>> = const { Cell::new(Vec::new()) };
}

/// Visits up to `max` records after the transaction's `gc_after` (from the start after the
/// end) and deletes the garbage among them, and with `now_ms` the stale windows too.
/// Returns how many it deleted and whether it reached the end.
pub(super) fn collect(max: usize, now_ms: Option<i64>) -> Result<(usize, bool)> {
    let after = with_log(|l| l.gc_after);
    let start = if after == 0 { Vec::new() } else { (after + 1).to_be_bytes().to_vec() };
    let mut visited = SPARE_VISITED.take();
    visited.clear();
    store::range(LOG, &start, None, max, |k, record| {
        let (key, value) = split(record)?;
        visited.push((seq_of(k), key, value));
        Ok::<_, StoreError>(())
    })?;
    let mut deleted = 0;
    let mut deleted_high = 0;
    let index = lock();
    // The index lines of all of them are read at once rather than one miss after another.
    for (_, key, _) in &visited {
        index.live.prefetch(key);
    }
    for (seq, key, value) in &visited {
        let live = current(&index, key).is_some_and(|e| e.seq == *seq);
        let window = is_window(key);
        let stale = window && live && now_ms.is_some_and(|now| Window::decode(value).is_none_or(|w| w.is_stale(now)));
        if live && !stale {
            continue;
        }
        store::del_counter(LOG, &seq.to_be_bytes())?;
        deleted += 1;
        deleted_high = *seq;
        if stale {
            with_log(|l| l.changes.insert(Digest(*key), None));
        }
    }
    let at_end = visited.len() < max;
    let next = if at_end { 0 } else { visited.last().map_or(0, |v| v.0) };
    with_log(|l| {
        l.gc_after = next;
        l.deleted_high = l.deleted_high.max(deleted_high);
    });
    // A sweep's visits (many thousands) are not kept: only a batch's.
    if visited.capacity() <= MAX_SPARE_VISITS {
        SPARE_VISITED.set(visited);
    }
    Ok((deleted, at_end))
}

/// Index slots `prune` looks at per record the sweep visits.
pub(super) const PRUNE_SLOTS_PER_VISIT: usize = 8;
/// Index slots a commit's `prune` looks at per record appended (while `Index::foreign_prune` lasts).
pub(super) const PRUNE_SLOTS_PER_APPEND: usize = 16;

/// Takes the windows stale at `now_ms` out of this process's index, looking at `budget` slots
/// from where it last stopped. A stale window reads as none, so this changes no answer; it
/// is for the windows another process deleted: their records are gone, so this process's
/// visits never meet them, and they would otherwise stay in its index for good (two servers
/// on one store under new identifiers each kept the windows the other deleted). A stale
/// window whose record is still in the log is then garbage to the next visit that meets it.
pub(super) fn prune(now_ms: i64, budget: usize) {
    prune_locked(&mut lock(), now_ms, budget);
}

pub(super) fn prune_locked(index: &mut Index, now_ms: i64, budget: usize) {
    let mut at = index.prune_at;
    let mut stale = Vec::new();
    index.live.stale_windows(now_ms, &mut at, budget, &mut stale);
    for key in &stale {
        index.live.remove(key);
    }
    index.prune_at = at;
}
