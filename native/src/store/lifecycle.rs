//! Opening and closing the store, and what the open store reports (`stats`) and makes
//! durable (`sync`).
//!
//! Contract:
//! - Opening the same directory again is a no-op; a different directory while open is an
//!   error. `close` waits for the transactions of other threads to end.
//! - Durability: `process` commits with MDB_NOSYNC, so a commit reaches the OS page cache (a
//!   killed process loses nothing; an OS crash can leave the store corrupt, see README), and
//!   the optional background syncer fsyncs; `disk` commits with MDB_NOMETASYNC (each commit
//!   fsyncs its pages before its meta page) and `sync()` makes the meta page durable.

use std::fs;
use std::path::Path;
use std::sync::atomic::AtomicUsize;
use std::time::Duration;

use crate::ffi::lmdb::{self, Dbi, Env, EnvironmentFlags};

use super::env::{next_generation, reserve, used_bytes, write_guard, Store, DEFAULT_MAP_BYTES};
use super::error::{lmdb_failed, Result, StoreError};
use super::page_cache::{cache_ahead, drop_cached, read_in, renew_ahead};
use super::read_txn::{discard_kept_reader, with_read};
use super::syncer::Syncer;
use super::table::Table;
use super::write_txn::in_transaction;

#[derive(Clone, Copy, Debug)]
pub struct OpenOptions {
    /// Background mdb_env_sync(force) period; 0 = no background syncer.
    pub sync_interval_ms: u64,
    /// Initial map size in bytes; 0 = DEFAULT_MAP_BYTES. The map doubles on MDB_MAP_FULL.
    pub initial_map_bytes: usize,
    /// Write through a writable map (MDB_WRITEMAP) when the filesystem can reserve the map's
    /// disk blocks up front; false = always commit through pwrite. See `open`.
    pub write_map: bool,
    /// `disk` durability: each commit makes its pages durable before it writes the meta page
    /// that points at them (see `open`).
    pub durable_commits: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stats {
    /// (last_pgno + 1) * page_size: bytes of the data file in use.
    pub used_bytes: u64,
    pub map_bytes: u64,
    pub page_size: u64,
    pub last_txn_id: u64,
    /// Sum of entries over all tables.
    pub entries: u64,
    /// Whether commits go through the writable map (see `open`).
    pub write_map: bool,
}

/// Opens the process-wide environment at `dir` (created if missing) with every table.
/// Idempotent for the same directory; another directory while open is `BadArgument`.
pub fn open(dir: &Path, opts: &OpenOptions) -> Result<()> {
    if in_transaction() {
        return Err(StoreError::NestedTxn("open"));
    }
    fs::create_dir_all(dir)
        .map_err(|e| StoreError::Os(format!("cannot create {}: {e}", dir.display())))?;
    let dir = fs::canonicalize(dir)
        .map_err(|e| StoreError::Os(format!("cannot resolve {}: {e}", dir.display())))?;
    let mut slot = write_guard();
    if let Some(store) = slot.as_ref() {
        return if store.dir == dir {
            Ok(())
        } else {
            Err(StoreError::BadArgument(format!(
                "store already open at {}; close it before opening {}",
                store.dir.display(),
                dir.display()
            )))
        };
    }
    let map_bytes = if opts.initial_map_bytes == 0 {
        DEFAULT_MAP_BYTES
    } else {
        opts.initial_map_bytes
    };
    let (mut env, write_map, reserved, cached_to) = open_env(&dir, map_bytes, opts.write_map)?;
    if opts.durable_commits {
        // With MDB_NOSYNC a commit leaves its pages and its meta page in the page cache, which
        // the kernel writes back in any order: a power loss before (or during) the fsync that
        // follows can leave a meta page on disk that points at pages that are not, and LMDB
        // opens the newest meta page, so the store would be corrupt, acknowledged data and
        // all. MDB_NOMETASYNC fsyncs a commit's pages before it writes the meta page (and
        // never reuses the pages of the two newest commits), so whatever subset reached the
        // disk opens as one of the last commits; `sync` then makes that meta page durable
        // before a reply leaves (src/store/durability.ts).
        env.set_flags(lmdb::MDB_NOSYNC, false).map_err(lmdb_failed("mdb_env_set_flags"))?;
        env.set_flags(lmdb::MDB_NOMETASYNC, true).map_err(lmdb_failed("mdb_env_set_flags"))?;
    }
    // Clears reader slots left by killed processes.
    env.check_readers().map_err(lmdb_failed("mdb_reader_check"))?;
    let mut dbis = Vec::with_capacity(Table::COUNT);
    for table in Table::ALL {
        dbis.push(create_table(&mut env, table)?);
    }
    let dbis: [Dbi; Table::COUNT] = dbis.try_into().expect("one per table");
    let generation = next_generation();
    let syncer = match opts.sync_interval_ms {
        0 => None,
        ms => Some(Syncer::spawn(&env, Duration::from_millis(ms), move || renew_ahead(generation))?),
    };
    *slot = Some(Store {
        env,
        dbis,
        dir,
        generation,
        syncer,
        write_map,
        reserved: AtomicUsize::new(reserved),
        cached_to: AtomicUsize::new(cached_to),
    });
    Ok(())
}

fn create_table(env: &mut Env, table: Table) -> Result<Dbi> {
    let dbi = match env.create_table(table.name(), table.index()) {
        Err(lmdb::MDB_MAP_RESIZED) => {
            // Another process grew the map since we opened: adopt its size, then retry.
            // No transaction is active on this new env.
            env.set_map_size(0).map_err(lmdb_failed("mdb_env_set_mapsize"))?;
            env.create_table(table.name(), table.index())
        }
        other => other,
    };
    dbi.map_err(lmdb_failed("create table"))
}

/// Opens the environment. With `write_map`, commits write through a writable map
/// (MDB_WRITEMAP: no page copies into malloc'd buffers, no pwrite per dirty page — about 1.5x
/// the verifications per second), which is only safe when every page of the map has disk
/// blocks: a write fault on a sparse page with the disk full would be SIGBUS, killing the
/// process, instead of an error for one request. So the whole map is reserved with
/// fallocate first (here and at every growth, see `reserve`); when the filesystem cannot
/// (no fallocate support, or no room) the environment is reopened without the writable map.
/// The environment, whether it has the writable map, the bytes of the map reserved, and
/// the end of the pages cached ahead of the data (without the writable map, `cache_ahead`).
fn open_env(dir: &Path, map_bytes: usize, write_map: bool) -> Result<(Env, bool, usize, usize)> {
    // mdb_env_open writes a new store's two meta pages in one 8 KiB write, which the kernel
    // may cache as one folio (see `drop_cached`): opened once more, they are read back as
    // single pages.
    if !dir.join("data.mdb").exists() {
        drop(open_env_once(dir, map_bytes, write_map)?);
    }
    open_env_once(dir, map_bytes, write_map)
}

fn open_env_once(dir: &Path, map_bytes: usize, write_map: bool) -> Result<(Env, bool, usize, usize)> {
    let open = |flags: EnvironmentFlags| Env::open(dir, flags, map_bytes, 64, 512).map_err(lmdb_failed("mdb_env_open"));
    // NO_READAHEAD: the map is madvise(MADV_RANDOM), see `drop_cached`.
    drop_cached(dir)?;
    let plain = EnvironmentFlags::NO_SYNC | EnvironmentFlags::NO_TLS | EnvironmentFlags::NO_READAHEAD;
    if write_map {
        let env = open(plain | EnvironmentFlags::WRITE_MAP)?;
        let map_bytes = env.info().map_bytes;
        if reserve(&env, map_bytes).is_ok() {
            read_in(&env)?;
            return Ok((env, true, map_bytes, 0));
        }
        drop(env);
    }
    let env = open(plain)?;
    read_in(&env)?;
    let cached_to = cache_ahead(&env, used_bytes(&env));
    Ok((env, false, 0, cached_to))
}

/// Stops the background syncer, fsyncs and closes. Idempotent. Waits for transactions of
/// other threads to finish; inside a transaction on this thread it is `NestedTxn`.
pub fn close() -> Result<()> {
    if in_transaction() {
        return Err(StoreError::NestedTxn("close"));
    }
    let taken = write_guard().take();
    let Some(mut store) = taken else {
        return Ok(());
    };
    if let Some(syncer) = store.syncer.take() {
        syncer.stop();
    }
    let synced = store.sync_env();
    // This thread's kept reader belongs to the env being closed: free it first.
    discard_kept_reader(&store);
    drop(store); // mdb_env_close
    synced
}

/// mdb_env_sync(force = 1): everything committed so far reaches the disk.
pub fn sync() -> Result<()> {
    with_read(|store, _| store.sync_env())
}

/// Copies the open store, compacted, into the empty directory `to` (its `data.mdb`) while
/// other threads and processes go on writing; the last transaction id before the copy began
/// (the copy holds that commit, or a later one).
pub fn backup(to: &Path) -> Result<u64> {
    if in_transaction() {
        return Err(StoreError::NestedTxn("backup"));
    }
    let guard = super::env::read_guard();
    let store = guard.as_ref().ok_or(StoreError::Closed)?;
    let before = store.info().last_txn_id as u64;
    store.env.copy_compact(to).map_err(lmdb_failed("mdb_env_copy2"))?;
    Ok(before)
}

pub fn stats() -> Result<Stats> {
    with_read(|store, txn| {
        let info = store.info();
        let page_size = store.env.page_size().map_err(lmdb_failed("mdb_env_stat"))? as u64;
        let mut entries = 0u64;
        for dbi in store.dbis {
            entries += txn.entries(dbi).map_err(lmdb_failed("mdb_stat"))? as u64;
        }
        Ok(Stats {
            used_bytes: (info.last_pgno as u64 + 1) * page_size,
            map_bytes: info.map_bytes as u64,
            page_size,
            last_txn_id: info.last_txn_id as u64,
            entries,
            write_map: store.write_map,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::tests::{get_vec, put_one, t, Fixture};
    use crate::store::view::get;
    use crate::store::write::put;
    use crate::store::write_txn::transaction;

    #[test]
    fn data_survives_close_and_reopen() {
        let f = Fixture::new("reopen", 64 * 1024);
        let creds = t("credits");
        put_one(creds, b"k", b"10");
        for i in 0..500u32 {
            put_one(creds, format!("n{i}").as_bytes(), &[1u8; 500]);
        }
        let used = stats().unwrap().used_bytes;
        close().unwrap();
        close().unwrap();
        assert!(matches!(get(creds, b"k", |_| ()), Err(StoreError::Closed)));
        assert!(matches!(sync(), Err(StoreError::Closed)));
        f.open(64 * 1024);
        assert_eq!(get_vec(creds, b"k"), Some(b"10".to_vec()));
        let s = stats().unwrap();
        assert_eq!(s.entries, 502, "the 501 puts and the records epoch");
        assert_eq!(s.used_bytes, used);
        // Reopening with a map smaller than the data still works and grows on demand.
        put_one(creds, b"later", &[2u8; 200_000]);
        sync().unwrap();
    }

    /// The environment flags of the open store.
    fn env_flags() -> u32 {
        with_read(|store, _| store.env.flags().map_err(lmdb_failed("mdb_env_get_flags"))).unwrap()
    }

    #[test]
    fn disk_durability_syncs_a_commits_pages_before_its_meta_page() {
        let f = Fixture::new("durable", 0);
        let flags = env_flags();
        assert!(flags & lmdb::MDB_NOSYNC != 0 && flags & lmdb::MDB_NOMETASYNC == 0, "process: commits reach the page cache only");
        close().unwrap();
        open(&f.dir, &OpenOptions { sync_interval_ms: 0, initial_map_bytes: 0, write_map: false, durable_commits: true }).unwrap();
        let flags = env_flags();
        assert!(flags & lmdb::MDB_NOSYNC == 0, "disk: a commit fsyncs its pages");
        assert!(flags & lmdb::MDB_NOMETASYNC != 0, "disk: the meta page is made durable by sync()");
        transaction(|| put(t("meta"), b"k", b"v")).unwrap();
        sync().unwrap();
        assert_eq!(get_vec(t("meta"), b"k").as_deref(), Some(&b"v"[..]));
    }

    #[test]
    fn open_same_dir_is_noop_other_dir_is_rejected() {
        let f = Fixture::new("twice", 0);
        f.open(0);
        let other = f.dir.with_extension("other");
        let err = open(
            &other,
            &OpenOptions {
                sync_interval_ms: 0,
                initial_map_bytes: 0,
                write_map: true,
                durable_commits: false,
            },
        );
        assert!(matches!(err, Err(StoreError::BadArgument(_))));
        let _ = fs::remove_dir_all(other);
    }
}
