//! Writes, only inside this thread's write transaction (write_txn.rs): records (`put`,
//! `del`, which bump the records epoch, epoch.rs, a dry run collects, dry_run.rs, and a
//! batch keeps, pending.rs) and
//! counters (`put_counter`,
//! `append_counter`, `del_counter`, which do not).

use crate::ffi::lmdb;

use super::dry_run::note_record;
use super::epoch::note_records_change;
use super::error::{lmdb_failed, Result, StoreError};
use super::pending;
use super::table::Table;
use super::view::check_key;
use super::write_txn::{put_at, with_write};

/// Inserts or replaces. Only inside `transaction`. A record change (see epoch.rs).
pub fn put(table: Table, key: &[u8], value: &[u8]) -> Result<()> {
    check_key(key)?;
    only_through_counterlog(table)?;
    note_record(table, key, Some(value))?;
    note_records_change()?;
    pending::changed(table, key);
    put_counter(table, key, value)
}

/// The counter log is written only by crate::counterlog, which keeps its index equal to it.
fn only_through_counterlog(table: Table) -> Result<()> {
    if table == Table::COUNTER_LOG {
        return Err(StoreError::BadArgument("counter_log is written only through the engine's counters (credits, rate-limit windows)".into()));
    }
    Ok(())
}

/// Appends `key`, which must sort after every key of `table` (MDB_APPEND: no search, the
/// last page filled before a new one is begun). A counter (see `put_counter`).
pub fn append_counter(table: Table, key: &[u8], value: &[u8]) -> Result<()> {
    check_key(key)?;
    with_write(|store, txn| match txn.cursor_mut(store.dbi(table))?.append(key, value) {
        Ok(()) => Ok(()),
        Err(lmdb::MDB_MAP_FULL) => Err(StoreError::RetryMapFull),
        Err(rc) => Err(StoreError::Lmdb("append", rc)),
    })
}

/// `put` for the counters of the hot calls (a credit balance, a window) and the counter log's
/// own state: leaves the records epoch alone. Only for values no cached answer is computed
/// from.
pub fn put_counter(table: Table, key: &[u8], value: &[u8]) -> Result<()> {
    check_key(key)?;
    with_write(|store, txn| put_at(&mut txn.cursor_mut(store.dbi(table))?, key, value))
}

/// Deletes `key`; true if it existed. Only inside `transaction`. A record change (see
/// epoch.rs).
pub fn del(table: Table, key: &[u8]) -> Result<bool> {
    check_key(key)?;
    only_through_counterlog(table)?;
    note_record(table, key, None)?;
    note_records_change()?;
    pending::changed(table, key);
    del_counter(table, key)
}

/// `del` for a counter of the hot calls (a stale window): leaves the records epoch alone.
pub fn del_counter(table: Table, key: &[u8]) -> Result<bool> {
    check_key(key)?;
    with_write(|store, txn| {
        let mut cursor = txn.cursor_mut(store.dbi(table))?;
        if cursor.get(key).map_err(lmdb_failed("get"))?.is_none() {
            return Ok(false);
        }
        // The cursor is on `key`.
        match cursor.del_current() {
            Ok(()) => Ok(true),
            Err(lmdb::MDB_MAP_FULL) => Err(StoreError::RetryMapFull),
            Err(rc) => Err(StoreError::Lmdb("del", rc)),
        }
    })
}
