//! The open environment: the process-wide slot that holds it (`STORE`), the guards of that
//! slot, and the map size.
//!
//! Contract:
//! - One environment per process: `open` (lifecycle.rs) fills the process-wide `STORE` slot,
//!   which every thread (Node worker threads included) shares; `close` empties it. Each open
//!   takes a new generation.
//! - Every LMDB transaction of this process (read or write) holds `STORE` in read mode for
//!   its whole life. Changing the map size needs "no active transactions in this process",
//!   so it takes `STORE` in write mode. Nobody waits for the write guard while holding an
//!   LMDB transaction, so the LMDB writer lock is never held while waiting on `STORE`.
//! - The map doubles on MDB_MAP_FULL (`grow_map`), up to `MAX_MAP_BYTES`; another process's
//!   growth is adopted on MDB_MAP_RESIZED (`adopt_map_size`).

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use crate::ffi::lmdb::{self, Dbi, Env, EnvInfo};
use crate::ffi::os;

use super::error::{lmdb_failed, Result, StoreError};
use super::syncer::Syncer;
use super::table::Table;

/// Map size used when `initial_map_bytes` is 0.
pub const DEFAULT_MAP_BYTES: usize = 1 << 30;
/// Map growth stops here (1 TiB of address space; without the writable map the file stays
/// sparse, with it the map's disk space is reserved, see lifecycle.rs `open_env`).
pub const MAX_MAP_BYTES: usize = 1 << 40;

/// The store's transactions, with a cursor slot per table.
pub(super) type Txn = lmdb::Txn<{ Table::COUNT }>;
pub(super) type WriteTxn = lmdb::WriteTxn<{ Table::COUNT }>;
pub(super) type ReadTxn<'e> = lmdb::ReadTxn<'e, { Table::COUNT }>;
pub(super) type Reader = lmdb::Reader<{ Table::COUNT }>;

pub(super) struct Store {
    pub(super) env: Env,
    /// Per table, in id order.
    pub(super) dbis: [Dbi; Table::COUNT],
    pub(super) dir: PathBuf,
    pub(super) generation: u64,
    pub(super) syncer: Option<Syncer>,
    pub(super) write_map: bool,
    /// With the writable map: how much of the map has disk blocks (`reserve`). Write
    /// transactions begin only when all of it has, since a write fault on a page without
    /// blocks is a SIGBUS once the disk is full; a map grown by another process is adopted
    /// even when its reserve fails, and writes stay refused until it succeeds.
    pub(super) reserved: AtomicUsize,
    /// Without the writable map: the end of the single pages cached ahead of the data
    /// (page_cache.rs `cache_ahead`).
    pub(super) cached_to: AtomicUsize,
}

static STORE: RwLock<Option<Store>> = RwLock::new(None);
static GENERATION: AtomicU64 = AtomicU64::new(0);

/// The generation of the store opened last (each open takes a new one): what a thread may
/// remember of the store's records is tagged with it.
pub fn last_generation() -> u64 {
    GENERATION.load(Ordering::Relaxed)
}

/// Takes the next generation, for a store being opened.
pub(super) fn next_generation() -> u64 {
    GENERATION.fetch_add(1, Ordering::Relaxed) + 1
}

pub(super) fn read_guard() -> RwLockReadGuard<'static, Option<Store>> {
    STORE.read().unwrap_or_else(PoisonError::into_inner)
}

pub(super) fn write_guard() -> RwLockWriteGuard<'static, Option<Store>> {
    STORE.write().unwrap_or_else(PoisonError::into_inner)
}

impl Store {
    #[inline]
    pub(super) fn dbi(&self, table: Table) -> Dbi {
        self.dbis[table.index()]
    }

    pub(super) fn info(&self) -> EnvInfo {
        self.env.info()
    }

    pub(super) fn map_bytes(&self) -> usize {
        self.info().map_bytes
    }

    pub(super) fn used_bytes(&self) -> usize {
        used_bytes(&self.env)
    }

    pub(super) fn sync_env(&self) -> Result<()> {
        self.env.sync().map_err(lmdb_failed("mdb_env_sync"))
    }
}

/// Bytes of the data file in use: (last page number + 1) × page size.
pub(super) fn used_bytes(env: &Env) -> usize {
    (env.info().last_pgno + 1) * env.page_size().unwrap_or(0)
}

/// Allocates disk blocks for the first `bytes` of the data file (fallocate, keeping the
/// size), so writes through the map never meet ENOSPC. Idempotent; cheap for ranges that are
/// already allocated.
pub(super) fn reserve(env: &Env, bytes: usize) -> Result<()> {
    let fd = env.data_fd().map_err(lmdb_failed("mdb_env_get_fd"))?;
    os::fallocate(fd, 0, bytes as libc::off_t)
        .map_err(|e| StoreError::Lmdb("reserve disk space (fallocate)", e.raw_os_error().unwrap_or(libc::EIO)))
}

/// Doubles the map unless someone already grew it past `seen_map_bytes`.
pub(super) fn grow_map(seen_map_bytes: usize) -> Result<()> {
    let mut slot = write_guard();
    let store = slot.as_mut().ok_or(StoreError::Closed)?;
    if store.map_bytes() > seen_map_bytes {
        return Ok(());
    }
    let target = seen_map_bytes.saturating_mul(2);
    if target > MAX_MAP_BYTES {
        return Err(StoreError::Lmdb("grow map (at maximum size)", lmdb::MDB_MAP_FULL));
    }
    if store.write_map {
        // The new pages need disk blocks before the map may reach them (see open_env); when
        // the disk has no room the map stays as it is and the write fails cleanly.
        reserve(&store.env, target)?;
        store.reserved.store(target, Ordering::Relaxed);
    }
    // We hold STORE in write mode, so no transaction of this process is active.
    if let Err(rc) = store.env.set_map_size(target) {
        // Leave the environment mapped at its previous size rather than unusable.
        let _ = store.env.set_map_size(seen_map_bytes);
        return Err(StoreError::Lmdb("grow map", rc));
    }
    Ok(())
}

/// After MDB_MAP_RESIZED (another process grew the map): adopt the size in the meta page.
pub(super) fn adopt_map_size() -> Result<()> {
    let mut slot = write_guard();
    let store = slot.as_mut().ok_or(StoreError::Closed)?;
    // We hold STORE in write mode, so no transaction of this process is active.
    store.env.set_map_size(0).map_err(lmdb_failed("mdb_env_set_mapsize"))?;
    // The process that grew it reserved the blocks unless it runs without the writable map.
    // When that fails here (disk full), reads go on; writes wait for it (begin_active).
    if store.write_map && reserve(&store.env, store.map_bytes()).is_ok() {
        store.reserved.store(store.map_bytes(), Ordering::Relaxed);
    }
    Ok(())
}

/// (the open environment's generation, the id of its last committed write transaction): it
/// changes whenever anything in the store may have changed, by any thread or process.
pub fn commit_mark() -> Result<(u64, u64)> {
    let guard = read_guard();
    let store = guard.as_ref().ok_or(StoreError::Closed)?;
    Ok((store.generation, store.info().last_txn_id as u64))
}
