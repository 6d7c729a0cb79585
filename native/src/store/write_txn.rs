//! This thread's write transaction (`ACTIVE`): begun by `transaction` (or by a group-commit
//! batch, batch.rs), used by every store call of the thread until it ends, and re-run after
//! the map grew when a write met MDB_MAP_FULL.
//!
//! Contract: the write transaction lives in a thread-local (`ACTIVE`) for the duration of
//! the `transaction` body, with the store's read guard (env.rs); `get`/`range`/`stats`/`sync`
//! on that thread go through it (reads see the transaction's own writes), `put`/`del` are
//! only allowed inside it. Its ends go through the commit hook (hook.rs).

use std::cell::RefCell;
use std::sync::atomic::Ordering;
use std::sync::RwLockReadGuard;

use crate::ffi::lmdb::{self, CursorMut};

use super::env::{adopt_map_size, grow_map, read_guard, reserve, Store, WriteTxn};
use super::error::{Result, StoreError};
use super::hook::{self, Committed};
use super::pending;
use super::page_cache::WRITER_AHEAD_MARGIN;

pub(super) struct ActiveTxn {
    /// Declared before `guard`, so that it ends before the guard is released. While a
    /// transaction nested in a batch runs, this is the nested one (the batch waits in `outer`).
    pub(super) txn: WriteTxn,
    /// The batch a nested transaction runs in (declared after `txn`: it ends after it).
    outer: Option<Outer>,
    pub(super) map_full: bool,
    /// Opened by `batch_begin` (group commit of hot calls), not by `transaction`.
    pub(super) batch: bool,
    /// The records epoch was bumped in this txn (epoch.rs).
    pub(super) records_changed: bool,
    pub(super) guard: RwLockReadGuard<'static, Option<Store>>,
}

/// A batch while a transaction nested in it runs, with what to restore if that one is discarded.
struct Outer {
    txn: WriteTxn,
    records_changed: bool,
}

thread_local! {
    pub(super) static ACTIVE: RefCell<Option<ActiveTxn>> = const { RefCell::new(None) };
}

pub fn in_transaction() -> bool {
    ACTIVE.with(|a| a.borrow().is_some())
}

/// True inside a transaction body once a write hit MDB_MAP_FULL: the body's outcome will
/// be discarded and the body re-run (the JS boundary clears the pending exception then).
pub fn transaction_needs_retry() -> bool {
    ACTIVE.with(|a| a.borrow().as_ref().is_some_and(|t| t.map_full))
}

/// Runs `f` with this thread's write transaction; `NotInTxn` outside `transaction`.
/// A `RetryMapFull` from `f` dooms the transaction.
pub(super) fn with_write<R>(f: impl FnOnce(&Store, &mut WriteTxn) -> Result<R>) -> Result<R> {
    ACTIVE.with(|cell| {
        let mut cell = cell.borrow_mut();
        let active = cell.as_mut().ok_or(StoreError::NotInTxn)?;
        if active.map_full {
            return Err(StoreError::RetryMapFull);
        }
        let store = active
            .guard
            .as_ref()
            .expect("store is open during a transaction");
        let result = f(store, &mut active.txn);
        if matches!(result, Err(StoreError::RetryMapFull)) {
            active.map_full = true;
        }
        result
    })
}

/// Puts through `cursor` (of this thread's write txn); MAP_FULL is `RetryMapFull`.
pub(super) fn put_at(cursor: &mut CursorMut<'_>, key: &[u8], value: &[u8]) -> Result<()> {
    match cursor.put(key, value) {
        Ok(()) => Ok(()),
        Err(lmdb::MDB_MAP_FULL) => Err(StoreError::RetryMapFull),
        Err(rc) => Err(StoreError::Lmdb("put", rc)),
    }
}

/// Runs `body` inside one LMDB write transaction on this thread: commits if it returns Ok,
/// aborts and returns its error otherwise.
///
/// The body may run more than once: when a write hits MDB_MAP_FULL (or the commit does),
/// the transaction is aborted, the map doubled and `body` re-run from scratch. Bodies must
/// therefore have no side effects outside the store. Nested calls are `NestedTxn`.
///
/// Inside this thread's batch (batch.rs; not under MDB_WRITEMAP, where LMDB has no nested
/// transactions) the body runs once, in a transaction nested in the batch: its writes are
/// merged into the batch and commit with it; a body that fails leaves the batch as it was.
/// A write of it that meets MAP_FULL fails it with `RetryMapFull` (the batch unharmed): the
/// caller commits the batch and runs the body again on its own.
pub fn transaction<T, E: From<StoreError>>(mut body: impl FnMut() -> Result<T, E>) -> Result<T, E> {
    if nestable_batch() {
        return nested(&mut body);
    }
    loop {
        let Some((value, active)) = run_body(&mut body)? else { continue };
        let map_bytes = active.map_bytes;
        match commit(active) {
            Ok(()) => return Ok(value),
            Err(lmdb::MDB_MAP_FULL) => grow_map(map_bytes)?,
            Err(rc) => return Err(StoreError::Lmdb("commit", rc).into()),
        }
    }
}

/// This thread has a batch open, with no nested transaction, on a store without MDB_WRITEMAP.
fn nestable_batch() -> bool {
    ACTIVE.with(|a| a.borrow().as_ref().is_some_and(|t| t.batch && t.outer.is_none() && !t.guard.as_ref().is_some_and(|s| s.write_map)))
}

/// Runs `body` in a transaction nested in this thread's batch (see `transaction`).
fn nested<T, E: From<StoreError>>(body: &mut impl FnMut() -> Result<T, E>) -> Result<T, E> {
    ACTIVE.with(|a| -> Result<()> {
        let mut a = a.borrow_mut();
        let active = a.as_mut().expect("a batch is open");
        let child = active.txn.begin_child().map_err(|rc| StoreError::Lmdb("mdb_txn_begin (nested)", rc))?;
        let batch = std::mem::replace(&mut active.txn, child);
        active.outer = Some(Outer { txn: batch, records_changed: active.records_changed });
        Ok(())
    })?;
    pending::nested_begin();
    hook::savepoint();
    let unwind = AbortActiveOnUnwind;
    let result = body();
    std::mem::forget(unwind);
    let map_full = ACTIVE.with(|a| a.borrow().as_ref().is_some_and(|t| t.map_full));
    let merge = result.is_ok() && !map_full;
    let ended = ACTIVE.with(|a| {
        let mut a = a.borrow_mut();
        let active = a.as_mut().expect("the batch is still open");
        let outer = active.outer.take().expect("a nested transaction runs");
        let child = std::mem::replace(&mut active.txn, outer.txn);
        active.map_full = false;
        if merge {
            child.commit()
        } else {
            active.records_changed = outer.records_changed;
            child.abort();
            Ok(())
        }
    });
    pending::nested_end(merge && ended.is_ok());
    match (merge, ended) {
        (true, Ok(())) => hook::release(),
        _ => hook::rollback(),
    }
    if let Err(rc) = ended {
        return Err(StoreError::Lmdb("commit (nested)", rc).into());
    }
    if map_full {
        return Err(StoreError::RetryMapFull.into());
    }
    result
}

/// The body of a transaction ready to end: the body's value and the transaction, taken out of
/// ACTIVE.
pub(super) struct Ended {
    active: ActiveTxn,
    map_bytes: usize,
}

/// Runs `body` once inside a new write transaction (`transaction`, `dry_run`): Some(the
/// body's value and the transaction, to commit or abort) when the body succeeded; None when
/// the map filled up (it has grown; run the body again); the body's error otherwise (the
/// transaction aborted).
pub(super) fn run_body<T, E: From<StoreError>>(body: &mut impl FnMut() -> Result<T, E>) -> Result<Option<(T, Ended)>, E> {
    if in_transaction() {
        return Err(StoreError::NestedTxn("transaction").into());
    }
    let map_bytes = begin_active(false)?;
    let unwind = AbortActiveOnUnwind;
    let mut result = body();
    if result.is_ok() {
        if let Err(e) = hook::before_commit() {
            result = Err(e.into());
        }
    }
    std::mem::forget(unwind);
    let active = ACTIVE
        .with(|a| a.borrow_mut().take())
        .expect("active transaction");
    if active.map_full {
        abort(active);
        grow_map(map_bytes)?;
        return Ok(None);
    }
    match result {
        Ok(value) => Ok(Some((value, Ended { active, map_bytes }))),
        Err(e) => {
            abort(active);
            Err(e)
        }
    }
}

/// Ends a transaction `run_body` left ready without committing it.
pub(super) fn abort_taken(ended: Ended) {
    abort(ended.active);
}

/// Begins this thread's write transaction (adopting a map grown by another process; for a
/// batch, growing the map ahead once it is past ¾ full, see `batch_begin`) and keeps it in
/// ACTIVE with the store's read guard. Returns the map size it began with.
pub(super) fn begin_active(batch: bool) -> Result<usize> {
    loop {
        let guard = read_guard();
        let store = guard.as_ref().ok_or(StoreError::Closed)?;
        let (map_bytes, used) = (store.map_bytes(), store.used_bytes());
        if batch && used.saturating_mul(4) > map_bytes.saturating_mul(3) {
            drop(guard);
            grow_map(map_bytes)?;
            continue;
        }
        if store.write_map && store.reserved.load(Ordering::Relaxed) < map_bytes {
            reserve(&store.env, map_bytes)?;
            store.reserved.store(map_bytes, Ordering::Relaxed);
        }
        store.keep_ahead(used, WRITER_AHEAD_MARGIN);
        let txn = match store.env.begin_write() {
            Ok(txn) => txn,
            Err(lmdb::MDB_MAP_RESIZED) => {
                drop(guard);
                adopt_map_size()?;
                continue;
            }
            Err(rc) => return Err(StoreError::Lmdb("mdb_txn_begin (write)", rc)),
        };
        ACTIVE.with(|a| {
            *a.borrow_mut() = Some(ActiveTxn {
                txn,
                outer: None,
                map_full: false,
                batch,
                records_changed: false,
                guard,
            })
        });
        return Ok(map_bytes);
    }
}

/// Ends `active` without a commit: the hook is told, the txn aborted, then the guard
/// released.
pub(super) fn abort(active: ActiveTxn) {
    hook::aborted();
    active.txn.abort();
}

/// Commits a transaction `run_body` left ready.
fn commit(ended: Ended) -> Committed {
    commit_active(ended.active)
}

/// Commits `active` through the hook, then releases the guard.
pub(super) fn commit_active(active: ActiveTxn) -> Committed {
    let ActiveTxn { txn, guard, .. } = active;
    let committed = hook::commit(txn);
    drop(guard);
    committed
}

/// On a panic in the body, aborts the thread's transaction and releases its guard.
struct AbortActiveOnUnwind;

impl Drop for AbortActiveOnUnwind {
    fn drop(&mut self) {
        let taken = ACTIVE.try_with(|a| a.try_borrow_mut().ok().and_then(|mut a| a.take()));
        if let Ok(Some(active)) = taken {
            abort(active);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::lifecycle::{close, open, stats, OpenOptions};
    use crate::store::tests::{get_vec, put_one, t, Fixture};
    use crate::store::view::get;
    use crate::store::write::{del, put};

    #[test]
    fn writes_need_a_transaction_and_cannot_nest() {
        let _f = Fixture::new("rules", 0);
        assert!(matches!(
            put(t("meta"), b"k", b"v"),
            Err(StoreError::NotInTxn)
        ));
        assert!(matches!(del(t("meta"), b"k"), Err(StoreError::NotInTxn)));
        let nested = transaction(|| transaction(|| Ok::<_, StoreError>(())));
        assert!(matches!(nested, Err(StoreError::NestedTxn("transaction"))));
        assert!(matches!(
            transaction(close),
            Err(StoreError::NestedTxn("close"))
        ));
    }

    #[test]
    fn reads_inside_a_transaction_see_its_writes_and_abort_discards_them() {
        let _f = Fixture::new("abort", 0);
        let keys = t("keys");
        let seen = transaction(|| {
            put(keys, b"k", b"v")?;
            get(keys, b"k", |v| v.map(<[u8]>::to_vec))
        })
        .unwrap();
        assert_eq!(seen, Some(b"v".to_vec()));
        let failed: Result<(), StoreError> = transaction(|| {
            put(keys, b"k", b"changed")?;
            put(keys, b"other", b"x")?;
            Err(StoreError::BadArgument("user error".into()))
        });
        assert!(matches!(failed, Err(StoreError::BadArgument(_))));
        assert_eq!(get_vec(keys, b"k"), Some(b"v".to_vec()));
        assert_eq!(get_vec(keys, b"other"), None);
    }

    #[test]
    fn inside_a_batch_a_transaction_nests_and_a_failed_one_leaves_the_batch_as_it_was() {
        use crate::store::batch::{batch_begin, batch_commit};
        let _f = Fixture::new("nested", 0);
        let keys = t("keys");
        batch_begin().unwrap();
        put(keys, b"batch", b"1").unwrap();
        transaction(|| put(keys, b"merged", b"2")).unwrap();
        let failed: Result<(), StoreError> = transaction(|| {
            put(keys, b"discarded", b"3")?;
            put(keys, b"batch", b"overwritten")?;
            Err(StoreError::BadArgument("user error".into()))
        });
        assert!(matches!(failed, Err(StoreError::BadArgument(_))));
        // The batch reads its own and the merged writes, not the discarded ones.
        assert_eq!(get_vec(keys, b"merged"), Some(b"2".to_vec()));
        assert_eq!(get_vec(keys, b"discarded"), None);
        assert_eq!(get_vec(keys, b"batch"), Some(b"1".to_vec()));
        // Another thread sees nothing before the batch commits.
        let elsewhere = std::thread::spawn(move || get_vec(keys, b"merged")).join().unwrap();
        assert_eq!(elsewhere, None);
        put(keys, b"after", b"4").unwrap();
        assert!(batch_commit().unwrap());
        assert!(!in_transaction());
        for (k, v) in [(&b"batch"[..], Some(&b"1"[..])), (b"merged", Some(b"2")), (b"after", Some(b"4")), (b"discarded", None)] {
            assert_eq!(get_vec(keys, k).as_deref(), v, "{}", String::from_utf8_lossy(k));
        }
        // Outside a batch, nesting is still refused.
        let nested = transaction(|| transaction(|| Ok::<_, StoreError>(())));
        assert!(matches!(nested, Err(StoreError::NestedTxn("transaction"))));
    }

    #[test]
    fn panic_in_body_aborts_and_releases() {
        let _f = Fixture::new("panic", 0);
        let meta = t("meta");
        let caught = std::panic::catch_unwind(|| {
            let _ = transaction(|| -> Result<(), StoreError> {
                put(meta, b"k", b"v")?;
                panic!("boom");
            });
        });
        assert!(caught.is_err());
        assert!(!in_transaction());
        assert_eq!(get_vec(meta, b"k"), None);
        put_one(meta, b"k", b"after");
        assert_eq!(get_vec(meta, b"k"), Some(b"after".to_vec()));
    }

    #[test]
    fn map_grows_inside_one_transaction_and_across_many() {
        let _f = Fixture::new("grow", 64 * 1024);
        let windows = t("ratelimit_windows");
        let before = stats().unwrap().map_bytes;
        let value = vec![7u8; 1000];
        let mut runs = 0;
        transaction(|| {
            runs += 1;
            for i in 0..4000u32 {
                put(windows, format!("one-{i:06}").as_bytes(), &value)?;
            }
            Ok::<_, StoreError>(())
        })
        .unwrap();
        assert!(runs > 1, "the body was re-run after growing");
        for i in 0..2000u32 {
            put_one(windows, format!("many-{i:06}").as_bytes(), &value);
        }
        let after = stats().unwrap();
        assert!(
            after.map_bytes > before * 32,
            "{before} -> {}",
            after.map_bytes
        );
        assert_eq!(after.entries, 6000 + 1, "and the records epoch");
        assert_eq!(get_vec(windows, b"one-003999").unwrap(), value);
        assert_eq!(get_vec(windows, b"many-001999").unwrap(), value);
    }

    #[test]
    fn threads_do_not_lose_updates_and_syncer_stops() {
        let f = Fixture::new("threads", 64 * 1024);
        close().unwrap();
        open(
            &f.dir,
            &OpenOptions {
                sync_interval_ms: 5,
                initial_map_bytes: 64 * 1024,
                write_map: true,
                durable_commits: false,
            },
        )
        .unwrap();
        let meta = t("meta");
        let workers: Vec<_> = (0..4)
            .map(|w| {
                std::thread::spawn(move || {
                    for i in 0..500u32 {
                        transaction(|| {
                            let n = get(meta, b"counter", |v| {
                                v.map_or(0, |b| u64::from_le_bytes(b.try_into().unwrap()))
                            })?;
                            put(meta, b"counter", &(n + 1).to_le_bytes())?;
                            // Padding makes the map grow while other threads are writing.
                            put(meta, format!("pad-{w}-{i}").as_bytes(), &[0u8; 300])
                        })
                        .unwrap();
                    }
                })
            })
            .collect();
        for w in workers {
            w.join().unwrap();
        }
        let n = get(meta, b"counter", |v| {
            u64::from_le_bytes(v.unwrap().try_into().unwrap())
        })
        .unwrap();
        assert_eq!(n, 2000);
        std::thread::sleep(std::time::Duration::from_millis(20));
        close().unwrap();
    }
}
