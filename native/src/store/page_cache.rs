//! The data file in the kernel's page cache: kept as single 4 KiB pages (`drop_cached`,
//! `cache_ahead`), read in when the store opens (`read_in`) and before a server takes
//! requests (`warm`).

use std::fs;
use std::os::fd::AsFd;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::atomic::Ordering;

use crate::ffi::lmdb::Env;
use crate::ffi::os;

use super::env::{read_guard, used_bytes, Store};
use super::error::{lmdb_failed, Result, StoreError};

/// Keeps the data file in the page cache as single 4 KiB pages rather than large folios.
///
/// Why: Linux (ext4 since 6.16, xfs and others earlier) caches a file in large folios (up to
/// 2 MiB) when it is read ahead or written in runs, and a folio is dirtied and written back
/// as a whole. LMDB changes scattered 4 KiB pages, so one changed page made the background
/// fsync write its whole folio: on this machine an idle server wrote 26 MB/s, and one
/// verifying 17,500 keys per second 460 MB/s, for a store of 115 MB. Readahead is what
/// creates them for the map, so the map is MADV_RANDOM (MDB_NORDAHEAD). What an earlier
/// process left cached (in large folios, or dirty after a kill) is written back and dropped
/// before the environment is opened (`drop_cached`), and once it is open the pages in use
/// are read back with POSIX_FADV_WILLNEED (`read_in`), which reads single pages in bulk, so
/// that opening a large store is not a fault and a read per 4 KiB. Pages another process
/// has mapped stay as they are. Advice only: where the kernel declines, the store works as
/// before.
///
/// When another process has the environment open, its pages are cached as it arranged and
/// the reset is skipped (dropping them would only make this open read them back).
pub(super) fn drop_cached(dir: &Path) -> Result<()> {
    if open_elsewhere(dir) {
        return Ok(());
    }
    let path = dir.join("data.mdb");
    let Ok(file) = fs::File::open(&path) else { return Ok(()) };
    // Dirty pages cannot be dropped: write back what a killed process left first.
    file.sync_data().map_err(|e| StoreError::Os(format!("cannot write back {}: {e}", path.display())))?;
    os::fadvise(file.as_fd(), 0, 0, libc::POSIX_FADV_DONTNEED);
    // mdb_env_open reads the meta pages with pread, whose readahead would cache the pages
    // after them in large folios again: have them cached already.
    os::fadvise(file.as_fd(), 0, HEAD_BYTES, libc::POSIX_FADV_WILLNEED);
    Ok(())
}

/// What `drop_cached` reads in ahead of mdb_env_open (the meta pages' readahead window).
const HEAD_BYTES: libc::off_t = 1 << 20;

/// Whether another process has the environment at `dir` open: LMDB holds a shared fcntl
/// lock on the first byte of lock.mdb for as long as it has an environment open (taken in
/// mdb_env_open, exclusive while it sets the lock file up). F_GETLK only asks, and never
/// reports this process's own locks. Nothing of this process has the lock file open here
/// (closing a descriptor drops every fcntl lock the process holds on the file).
pub fn open_elsewhere(dir: &Path) -> bool {
    let Ok(file) = fs::OpenOptions::new().read(true).write(true).open(dir.join("lock.mdb")) else { return false };
    os::write_lock_conflicts(file.as_fd(), 0, 1)
}

/// How far ahead of the data single pages are kept cached without the writable map.
pub(super) const AHEAD_BYTES: usize = 8 << 20;
/// See `keep_ahead`.
pub(super) const WRITER_AHEAD_MARGIN: usize = AHEAD_BYTES / 8;

/// Without the writable map LMDB writes the pages the data grows into with pwrite, in runs
/// of consecutive new pages, and the kernel caches such a write in large folios (see
/// `drop_cached`). So the pages just past the data are cached ahead of time as single
/// pages: their disk blocks are allocated (fallocate, which extends the file) and read in
/// with POSIX_FADV_WILLNEED (zeros, nothing read from disk). Returns the end of that
/// region. Advice only: where the filesystem declines (no fallocate, disk full), nothing is
/// cached ahead and the writes work as before.
pub(super) fn cache_ahead(env: &Env, used: usize) -> usize {
    if let Ok(fd) = env.data_fd() {
        let (from, len) = (used as libc::off_t, AHEAD_BYTES as libc::off_t);
        if os::fallocate(fd, from, len).is_ok() {
            os::fadvise(fd, from, len, libc::POSIX_FADV_WILLNEED);
        }
    }
    used + AHEAD_BYTES
}

impl Store {
    /// Without the writable map: keeps single pages cached ahead of the data, `used` bytes
    /// (`cache_ahead`), renewed once fewer than `margin` of them are left. The syncer renews
    /// them at half (`AHEAD_BYTES / 2`, `renew_ahead`), off the serving thread (it costs about
    /// 1 ms); a write transaction does only when they are nearly used up
    /// (`WRITER_AHEAD_MARGIN`), as it must when there is no syncer or it fell behind.
    pub(super) fn keep_ahead(&self, used: usize, margin: usize) {
        if !self.write_map && used + margin > self.cached_to.load(Ordering::Relaxed) {
            self.cached_to.fetch_max(cache_ahead(&self.env, used), Ordering::Relaxed);
        }
    }
}

/// The syncer's renewal of the pages cached ahead of the store opened as `generation`;
/// false once that store is closed.
pub(super) fn renew_ahead(generation: u64) -> bool {
    let slot = read_guard();
    match slot.as_ref() {
        Some(store) if store.generation == generation => {
            store.keep_ahead(store.used_bytes(), AHEAD_BYTES / 2);
            true
        }
        _ => false,
    }
}

/// Reads the pages in use into the page cache in bulk (see `drop_cached`).
pub(super) fn read_in(env: &Env) -> Result<()> {
    let fd = env.data_fd().map_err(lmdb_failed("mdb_env_get_fd"))?;
    os::fadvise(fd, 0, used_bytes(env) as libc::off_t, libc::POSIX_FADV_WILLNEED);
    Ok(())
}

/// What `warm` brought into memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Warmed {
    /// Bytes of the data file in use when it started.
    pub used_bytes: u64,
    /// Bytes of them it went through (all of them unless the budget ran out).
    pub read_bytes: u64,
}

/// Has every page of the data in use in memory, for at most `budget`: what a server calls
/// once, after `open` and before it takes requests.
///
/// Why: `open` reads the pages in use back into the page cache with POSIX_FADV_WILLNEED
/// (`read_in`), which only starts the reads. A server that takes requests at once faults on
/// the pages not yet read, each a synchronous 4 KiB disk read (the map is MADV_RANDOM): on
/// this machine a fresh server on a 115 MB store, sent 50,000 verifications a second, fell
/// about 0.3 s behind within its first second.
///
/// How: one byte of every page is read with pread through a descriptor of its own with
/// POSIX_FADV_RANDOM (no readahead, so a page not read yet is read alone, as a single page,
/// see `drop_cached`; LMDB's descriptor keeps its advice). A read waits for the one already
/// under way; a cached page costs a system call, about 15 ms per 100 MB here. A store larger
/// than memory (or the budget) leaves the rest to be read on demand, as before.
pub fn warm(budget: std::time::Duration) -> Result<Warmed> {
    let (path, used) = {
        let guard = read_guard();
        let store = guard.as_ref().ok_or(StoreError::Closed)?;
        (store.dir.join("data.mdb"), store.used_bytes())
    };
    let file = fs::File::open(&path).map_err(|e| StoreError::Os(format!("cannot open {}: {e}", path.display())))?;
    os::fadvise(file.as_fd(), 0, 0, libc::POSIX_FADV_RANDOM);
    let started = std::time::Instant::now();
    const PAGE: usize = 4096;
    // The clock is read once per 2 MiB.
    const CHECK_EVERY: usize = 512 * PAGE;
    let mut byte = [0u8; 1];
    let mut off = 0;
    while off < used && started.elapsed() < budget {
        let end = (off + CHECK_EVERY).min(used);
        while off < end {
            // A short read (the file is never shorter than the pages in use) or an error only
            // leaves the page to be read on demand.
            let _ = file.read_at(&mut byte, off as u64);
            off += PAGE;
        }
    }
    Ok(Warmed { used_bytes: used as u64, read_bytes: off.min(used) as u64 })
}
