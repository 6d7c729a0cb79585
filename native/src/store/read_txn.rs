//! The transaction a read goes through (`with_read`): this thread's write transaction when it
//! has one (reads see its writes), otherwise a short read-only transaction, begun by
//! renewing the one the thread kept from its last read (`READER`, with its cursors).

use std::cell::RefCell;

use libc::c_int;

use crate::ffi::lmdb;

use super::env::{adopt_map_size, read_guard, ReadTxn, Reader, Store, Txn};
use super::error::StoreError;
use super::write_txn::ACTIVE;

/// A read transaction kept per thread between uses (reset, not aborted), with its cursors,
/// and the generation of the store it belongs to.
struct CachedReader {
    reader: Reader,
    generation: u64,
}

thread_local! {
    static READER: RefCell<Option<CachedReader>> = const { RefCell::new(None) };
}

/// Runs `f` with a transaction to read through (and its cursors): this thread's write
/// transaction when inside `transaction`, otherwise a short read-only one. `f` must not call
/// back into the store.
pub(super) fn with_read<R, E: From<StoreError>>(f: impl FnOnce(&Store, &Txn) -> Result<R, E>) -> Result<R, E> {
    ACTIVE.with(|cell| {
        if let Some(active) = cell.borrow().as_ref() {
            if active.map_full {
                return Err(StoreError::RetryMapFull.into());
            }
            let store = active
                .guard
                .as_ref()
                .expect("store is open during a transaction");
            return f(store, &active.txn);
        }
        loop {
            let guard = read_guard();
            let store = guard.as_ref().ok_or(StoreError::Closed)?;
            // Reuse this thread's reset read transaction when it belongs to this environment
            // (renewing is much cheaper than beginning: no reader-table search).
            let cached = READER.with(|r| r.borrow_mut().take()).filter(|c| c.generation == store.generation);
            match begin(store, cached) {
                Ok(txn) => {
                    let end = KeepOnDrop { txn: Some(txn), generation: store.generation };
                    return f(store, end.txn.as_deref().expect("read txn"));
                }
                Err(lmdb::MDB_MAP_RESIZED) => {}
                Err(rc) => return Err(StoreError::Lmdb("mdb_txn_begin (read)", rc).into()),
            }
            drop(guard);
            adopt_map_size()?;
        }
    })
}

/// A read transaction on `store`: `cached` renewed, or a new one. After MDB_MAP_RESIZED the
/// reader is discarded (its next read begins a new one, on the adopted map size).
fn begin(store: &Store, cached: Option<CachedReader>) -> Result<ReadTxn<'_>, c_int> {
    let Some(cached) = cached else { return store.env.begin_read() };
    cached.reader.renew(&store.env).map_err(|(reader, rc)| {
        if rc == lmdb::MDB_MAP_RESIZED {
            reader.discard(&store.env);
        }
        rc
    })
}

/// Ends a read: resets the txn and keeps it for this thread's next read, or aborts it when
/// the slot is taken by a nested read's txn, or the thread's slot is already gone.
struct KeepOnDrop<'e> {
    txn: Option<ReadTxn<'e>>,
    generation: u64,
}

impl Drop for KeepOnDrop<'_> {
    fn drop(&mut self) {
        let mut txn = self.txn.take();
        let generation = self.generation;
        let _ = READER.try_with(|r| {
            if let Ok(mut slot) = r.try_borrow_mut() {
                if slot.is_none() {
                    *slot = txn.take().map(|txn| CachedReader { reader: txn.reset(), generation });
                }
            }
        });
        // Not kept: dropped, it is aborted and its cursors closed.
        drop(txn);
    }
}

/// Frees this thread's kept read transaction when it belongs to `store` (being closed).
/// Other threads' kept readers are never used again (their generation no longer matches).
pub(super) fn discard_kept_reader(store: &Store) {
    if let Some(c) = READER.with(|r| r.borrow_mut().take()) {
        if c.generation == store.generation {
            c.reader.discard(&store.env);
        }
    }
}
