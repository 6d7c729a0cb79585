//! Group commit for the hot procedures: one write transaction that stays open on this
//! thread across several calls (those of one event-loop turn) until `batch_commit`. The
//! caller holds every reply until that commit succeeded, so "committed before the reply"
//! still holds. The map is grown ahead (past ¾ full) so a batch does not meet MAP_FULL;
//! if it does anyway, the whole batch is discarded (`RetryMapFull`) and nothing of it was
//! acknowledged.
//!
//! What the batch changed is kept (pending.rs), so that a read of it is noted: an answer
//! computed from such a read stands only if the batch commits.

use crate::ffi::lmdb;

use super::env::grow_map;
use super::error::{Result, StoreError};
use super::hook;
use super::pending;
use super::write_txn::{abort, begin_active, commit_active, in_transaction, ActiveTxn, ACTIVE};

/// Opens this thread's batch (see the module comment).
pub fn batch_begin() -> Result<()> {
    if in_transaction() {
        return Err(StoreError::NestedTxn("batch"));
    }
    pending::forget();
    begin_active(true).map(|_| ())
}

pub fn in_batch() -> bool {
    ACTIVE.with(|a| a.borrow().as_ref().is_some_and(|t| t.batch))
}

/// This thread's open batch, taken out of ACTIVE (None when it has none open).
fn take_batch() -> Option<ActiveTxn> {
    pending::forget();
    ACTIVE.with(|a| {
        let mut a = a.borrow_mut();
        if a.as_ref().is_some_and(|t| t.batch) {
            a.take()
        } else {
            None
        }
    })
}

/// Discards this thread's batch: nothing of it is committed. False when none is open.
pub fn batch_abort() -> bool {
    let Some(active) = take_batch() else { return false };
    abort(active);
    true
}

/// Commits this thread's batch; Ok(false) when none is open.
pub fn batch_commit() -> Result<bool> {
    let collected = if in_batch() { hook::before_commit() } else { Ok(()) };
    let Some(active) = take_batch() else {
        return Ok(false);
    };
    let map_bytes = active.guard.as_ref().map_or(0, |s| s.map_bytes());
    if active.map_full {
        abort(active);
        grow_map(map_bytes)?;
        return Err(StoreError::RetryMapFull);
    }
    if let Err(e) = collected {
        abort(active);
        return Err(e);
    }
    match commit_active(active) {
        Ok(()) => Ok(true),
        Err(lmdb::MDB_MAP_FULL) => {
            grow_map(map_bytes)?;
            Err(StoreError::RetryMapFull)
        }
        Err(rc) => Err(StoreError::Lmdb("commit", rc)),
    }
}
