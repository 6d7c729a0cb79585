//! The records epoch: a counter every committed change of a record bumps, in the same
//! transaction as the change, so an answer computed from records (verified.rs, memo.rs)
//! stays exact for as long as the epoch it was computed under is current.

use std::cell::Cell;

use super::error::{lmdb_failed, Result};
use super::table::Table;
use super::view::View;
use super::write_txn::{put_at, with_write, ACTIVE};

/// META key of the records epoch: a counter every committed change of a record bumps, in the
/// same transaction as the change. "Records" are everything but the counters the hot calls
/// keep (rate-limit windows and credit balances, written by `put_counter` and removed by
/// `del_counter`), so an answer computed without reading a counter stays exact for as long
/// as the epoch it was computed under is current — in every thread and every process
/// sharing the store.
const RECORDS_EPOCH: &[u8] = b"records_epoch";

/// The records epoch of this view's snapshot, with the store's open generation (an epoch
/// read from another open of a store is never equal to one read now).
pub fn records_epoch(v: &View<'_>) -> Result<(u64, u64)> {
    let mark = records_mark(v);
    if let Some((seen, epoch)) = EPOCH_SEEN.get() {
        if Some(seen) == mark {
            return Ok((v.store.generation, epoch));
        }
    }
    let epoch = epoch_value(v.get(Table::META, RECORDS_EPOCH)?);
    if let Some(mark) = mark {
        EPOCH_SEEN.set(Some((mark, epoch)));
    }
    Ok((v.store.generation, epoch))
}

thread_local! {
    /// (records_mark, epoch) of this thread's last read of the records epoch: every
    /// verification asks, and inside a turn's batch a B-tree lookup through the write
    /// transaction cost more than the rest of a cached key's reads.
    static EPOCH_SEEN: Cell<Option<((u64, u64), u64)>> = const { Cell::new(None) };
}

/// What `v` reads of records, as (store generation, snapshot id): two views with one mark
/// read the same records (and so the same records epoch and root-key version). None inside
/// a write transaction that changed records: what it reads is not committed.
pub fn records_mark(v: &View<'_>) -> Option<(u64, u64)> {
    (!uncommitted_record_change()).then(|| (v.store.generation, v.snapshot_id()))
}

/// The stored epoch (u64 little-endian); 0 before the first record change.
fn epoch_value(stored: Option<&[u8]>) -> u64 {
    stored.and_then(|b| <[u8; 8]>::try_from(b).ok()).map_or(0, u64::from_le_bytes)
}

/// This thread's open write transaction changed a record: an epoch read through it is not
/// committed yet (and is lost if the transaction aborts).
pub fn uncommitted_record_change() -> bool {
    ACTIVE.with(|a| a.borrow().as_ref().is_some_and(|t| t.records_changed))
}

/// Bumps the records epoch once per write transaction, before its first record change
/// (`put` and `del` do; a counter change that an answer kept by verified.rs depends on, such
/// as a key's credits being set or removed by management, calls it itself).
pub fn note_records_change() -> Result<()> {
    let first = ACTIVE.with(|a| a.borrow_mut().as_mut().is_some_and(|t| !std::mem::replace(&mut t.records_changed, true)));
    if !first {
        return Ok(());
    }
    with_write(|store, txn| {
        let mut cursor = txn.cursor_mut(store.dbi(Table::META))?;
        let epoch = epoch_value(cursor.get(RECORDS_EPOCH).map_err(lmdb_failed("get"))?);
        put_at(&mut cursor, RECORDS_EPOCH, &(epoch + 1).to_le_bytes())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::batch::{batch_begin, batch_commit};
    use crate::store::error::StoreError;
    use crate::store::lifecycle::close;
    use crate::store::tests::{put_one, t, Fixture};
    use crate::store::view::view;
    use crate::store::write::{del, del_counter, put, put_counter};
    use crate::store::write_txn::transaction;

    fn epoch() -> (u64, u64) {
        view(|v| records_epoch(v)).unwrap()
    }

    #[test]
    fn record_changes_bump_the_records_epoch_once_per_committed_txn() {
        let f = Fixture::new("epoch", 0);
        let (generation, start) = epoch();
        assert_eq!(start, 0, "a new store");
        put_one(t("keys"), b"k", b"1");
        assert_eq!(epoch(), (generation, 1));
        transaction(|| {
            put(t("apis"), b"a", b"1")?;
            del(t("keys"), b"k")?;
            put(t("roles"), b"r", b"1")
        })
        .unwrap();
        assert_eq!(epoch(), (generation, 2), "one bump for the whole txn");
        // Counters are not records.
        transaction(|| {
            put_counter(t("ratelimit_windows"), b"c", b"5")?;
            put_counter(t("ratelimit_windows"), b"w", b"1")?;
            del_counter(t("ratelimit_windows"), b"w").map(|_| ())
        })
        .unwrap();
        assert_eq!(epoch(), (generation, 2));
        // An aborted txn bumps nothing.
        let aborted: Result<(), StoreError> = transaction(|| {
            put(t("keys"), b"k2", b"1")?;
            Err(StoreError::BadArgument("abort".into()))
        });
        assert!(aborted.is_err());
        assert_eq!(epoch(), (generation, 2));
        // A group-commit batch with a record change bumps it too.
        batch_begin().unwrap();
        put(t("credits"), b"c", b"6").unwrap();
        assert!(batch_commit().unwrap());
        assert_eq!(epoch(), (generation, 3));
        // Another open of the store is another generation; the epoch itself is stored.
        close().unwrap();
        f.open(0);
        let (reopened, kept) = epoch();
        assert_ne!(reopened, generation);
        assert_eq!(kept, 3);
    }
}
