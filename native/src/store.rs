//! The LMDB environment, its named tables and transactions, as plain Rust.
//!
//! Contract:
//! - One environment per process: `open` fills the process-wide `STORE` slot, which every
//!   thread (Node worker threads included) shares. Opening the same directory again is a
//!   no-op; a different directory while open is an error. `close` empties the slot.
//! - Every LMDB transaction of this process (read or write) holds `STORE` in read mode for
//!   its whole life. Changing the map size needs "no active transactions in this process",
//!   so it takes `STORE` in write mode. Nobody waits for the write guard while holding an
//!   LMDB transaction, so the LMDB writer lock is never held while waiting on `STORE`.
//! - A write transaction lives in a thread-local (`ACTIVE`) for the duration of the
//!   `transaction` body; `get`/`range`/`stats`/`sync` on that thread go through it (reads see
//!   the transaction's own writes), `put`/`del` are only allowed inside it.
//! - Durability: `process` commits with MDB_NOSYNC, so a commit reaches the OS page cache (a
//!   killed process loses nothing; an OS crash can leave the store corrupt, see README), and
//!   the optional background syncer fsyncs; `disk` commits with MDB_NOMETASYNC (each commit
//!   fsyncs its pages before its meta page) and `sync()` makes the meta page durable.

use std::cell::{Cell, RefCell};
use std::ffi::CStr;
use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};
use std::ptr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use libc::{c_int, c_void};
use lmdb::{DatabaseFlags, Environment, EnvironmentFlags};
use lmdb_sys as ffi;

use crate::counterlog::{self, TxnLog};

/// The named tables, created at open. The index of a name is its `Table` id.
pub const TABLES: [&str; 18] = [
    "meta",
    "workspaces",
    "root_keys",
    "root_key_hashes",
    "apis",
    "keys",
    "key_hashes",
    "api_keys",
    "permissions",
    "roles",
    "identities",
    "ratelimit_namespaces",
    "ratelimit_overrides",
    "ratelimit_windows",
    "credits",
    "indexes",
    "key_records",
    "counter_log",
];
const TABLE_COUNT: usize = TABLES.len();

/// LMDB's compiled-in maximum key size (mdb_env_get_maxkeysize with the default build).
pub const MAX_KEY_BYTES: usize = 511;
/// Map size used when `initial_map_bytes` is 0.
pub const DEFAULT_MAP_BYTES: usize = 1 << 30;
/// Map growth stops here (1 TiB of address space; without the writable map the file stays
/// sparse, with it the map's disk space is reserved, see `open_env`).
pub const MAX_MAP_BYTES: usize = 1 << 40;

/// A named table (index into `TABLES`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Table(u8);

impl Table {
    /// Older layouts' places of credits and windows, read only by migrate.rs.
    pub const CREDITS: Table = Table(14);
    pub const KEYS: Table = Table(5);
    pub const KEY_HASHES: Table = Table(6);
    pub const KEY_RECORDS: Table = Table(16);
    pub const APIS: Table = Table(4);
    pub const ROLES: Table = Table(9);
    pub const IDENTITIES: Table = Table(10);
    /// See CREDITS.
    pub const RATELIMIT_WINDOWS: Table = Table(13);
    pub const RATELIMIT_OVERRIDES: Table = Table(12);
    pub const RATELIMIT_NAMESPACES: Table = Table(11);
    pub const META: Table = Table(0);
    pub const INDEXES: Table = Table(15);
    /// Credits and rate-limit windows, an append-only log (counterlog.rs); written only
    /// through it.
    pub const COUNTER_LOG: Table = Table(17);
}

impl Table {
    /// Resolves a table name without allocating; `None` for names not in `TABLES`.
    pub fn from_name(name: &[u8]) -> Option<Table> {
        let i = match name {
            b"meta" => 0,
            b"workspaces" => 1,
            b"root_keys" => 2,
            b"root_key_hashes" => 3,
            b"apis" => 4,
            b"keys" => 5,
            b"key_hashes" => 6,
            b"api_keys" => 7,
            b"permissions" => 8,
            b"roles" => 9,
            b"identities" => 10,
            b"ratelimit_namespaces" => 11,
            b"ratelimit_overrides" => 12,
            b"ratelimit_windows" => 13,
            b"credits" => 14,
            b"indexes" => 15,
            b"key_records" => 16,
            b"counter_log" => 17,
            _ => return None,
        };
        Some(Table(i))
    }

    #[cfg(test)]
    pub fn name(self) -> &'static str {
        TABLES[self.0 as usize]
    }
}

#[derive(Debug)]
pub enum StoreError {
    /// No environment is open.
    Closed,
    /// put/del outside `transaction`.
    NotInTxn,
    /// `transaction` (or open/close) called inside a transaction on the same thread.
    NestedTxn(&'static str),
    UnknownTable(String),
    BadArgument(String),
    /// A write hit MDB_MAP_FULL; the transaction is doomed and `transaction` re-runs its body
    /// after growing the map. Every further operation in that body fails with this too.
    RetryMapFull,
    /// An LMDB or errno code from the named operation.
    Lmdb(&'static str, c_int),
    /// A filesystem error outside LMDB (creating/resolving the directory).
    Os(String),
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreError::Closed => f.write_str("store is not open"),
            StoreError::NotInTxn => f.write_str("put/del must be called inside transaction()"),
            StoreError::NestedTxn(op) => write!(f, "{op}() called inside a transaction"),
            StoreError::UnknownTable(name) => write!(f, "unknown table {name:?}"),
            StoreError::BadArgument(msg) => f.write_str(msg),
            StoreError::RetryMapFull => {
                f.write_str("LMDB map full; the map was grown, so the same request can be retried")
            }
            StoreError::Lmdb(op, rc) => write!(f, "{op} failed: {}", lmdb_error_name(*rc)),
            StoreError::Os(msg) => f.write_str(msg),
        }
    }
}

/// "MDB_MAP_FULL: Environment mapsize limit reached", "ENOSPC: No space left on device", …
pub fn lmdb_error_name(rc: c_int) -> String {
    // SAFETY: mdb_strerror returns a static or thread-local NUL-terminated string.
    let text = unsafe { CStr::from_ptr(ffi::mdb_strerror(rc)) }.to_string_lossy();
    let errno = match rc {
        libc::ENOSPC => "ENOSPC",
        libc::EIO => "EIO",
        libc::ENOMEM => "ENOMEM",
        libc::EACCES => "EACCES",
        libc::EPERM => "EPERM",
        libc::EINVAL => "EINVAL",
        libc::ENOENT => "ENOENT",
        libc::EROFS => "EROFS",
        libc::EDQUOT => "EDQUOT",
        libc::EAGAIN => "EAGAIN",
        libc::EFBIG => "EFBIG",
        _ if rc > 0 => "errno",
        _ => return text.into_owned(),
    };
    format!("{errno}: {text} (code {rc})")
}

pub type Result<T, E = StoreError> = std::result::Result<T, E>;

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

pub struct Store {
    env: Environment,
    dbis: [ffi::MDB_dbi; TABLE_COUNT],
    dir: PathBuf,
    generation: u64,
    syncer: Option<Syncer>,
    write_map: bool,
    /// With the writable map: how much of the map has disk blocks (`reserve`). Write
    /// transactions begin only when all of it has, since a write fault on a page without
    /// blocks is a SIGBUS once the disk is full; a map grown by another process is adopted
    /// even when its reserve fails, and writes stay refused until it succeeds.
    reserved: AtomicUsize,
    /// Without the writable map: the end of the single pages cached ahead of the data
    /// (`cache_ahead`).
    cached_to: AtomicUsize,
}

static STORE: RwLock<Option<Store>> = RwLock::new(None);
static GENERATION: AtomicU64 = AtomicU64::new(0);

struct ActiveTxn {
    txn: *mut ffi::MDB_txn,
    map_full: bool,
    /// Opened by `batch_begin` (group commit of hot calls), not by `transaction`.
    batch: bool,
    /// The records epoch was bumped in this txn (see `records_epoch`).
    records_changed: bool,
    /// Freed by LMDB when the txn ends (cursors of a write txn are).
    cursors: Cursors,
    /// The counter log's changes in this txn, applied to its index when the txn commits.
    log: RefCell<TxnLog>,
    guard: RwLockReadGuard<'static, Option<Store>>,
}

/// One cursor per table, opened on first use in a transaction and used for every get, put
/// and del of that table in it. A cursor that stays on a leaf page finds keys on that page
/// without descending from the root again (LMDB's mdb_cursor_set checks the current page
/// first), so the reads and writes a hot call makes on neighbouring keys (a key's credits
/// and windows, one identifier's window) cost one descent.
///
/// Write-txn cursors are freed by LMDB with their txn. Read-txn cursors are kept with the
/// thread's cached reader, renewed for each new read txn and closed with the reader.
struct Cursors {
    slots: [Cell<*mut ffi::MDB_cursor>; TABLE_COUNT],
    /// Bit per table: the slot's cursor belongs to the current txn.
    bound: Cell<u32>,
}

impl Cursors {
    fn new() -> Cursors {
        Cursors { slots: std::array::from_fn(|_| Cell::new(ptr::null_mut())), bound: Cell::new(0) }
    }

    /// The table's cursor in `txn`: opened, or (a kept read cursor) renewed for this txn.
    fn cursor(&self, store: &Store, txn: *mut ffi::MDB_txn, table: Table) -> Result<*mut ffi::MDB_cursor> {
        let i = table.0 as usize;
        let mut cursor = self.slots[i].get();
        if self.bound.get() & (1 << i) != 0 {
            return Ok(cursor);
        }
        if cursor.is_null() {
            // SAFETY: txn is live; the cursor is freed by LMDB (write txn) or by close_all.
            check("mdb_cursor_open", unsafe { ffi::mdb_cursor_open(txn, store.dbi(table), &mut cursor) })?;
        } else {
            // SAFETY: a kept cursor of a read-only txn of this env; txn is a live read txn.
            check("mdb_cursor_renew", unsafe { ffi::mdb_cursor_renew(txn, cursor) })?;
        }
        self.slots[i].set(cursor);
        self.bound.set(self.bound.get() | (1 << i));
        Ok(cursor)
    }

    /// A new read txn begins: kept cursors are renewed before their next use.
    fn unbind(&self) {
        self.bound.set(0);
    }

    /// Closes the kept cursors of a read-only txn (before the env closes).
    ///
    /// # Safety
    /// Only for read-txn cursors of an environment that is still open.
    unsafe fn close_read_cursors(&self) {
        for slot in &self.slots {
            let cursor = slot.replace(ptr::null_mut());
            if !cursor.is_null() {
                ffi::mdb_cursor_close(cursor);
            }
        }
        self.bound.set(0);
    }
}

thread_local! {
    static ACTIVE: RefCell<Option<ActiveTxn>> = const { RefCell::new(None) };
}

/// The generation of the store opened last (each open takes a new one): what a thread may
/// remember of the store's records is tagged with it.
pub fn last_generation() -> u64 {
    GENERATION.load(Ordering::Relaxed)
}

fn read_guard() -> RwLockReadGuard<'static, Option<Store>> {
    STORE.read().unwrap_or_else(PoisonError::into_inner)
}

fn write_guard() -> RwLockWriteGuard<'static, Option<Store>> {
    STORE.write().unwrap_or_else(PoisonError::into_inner)
}

fn check(op: &'static str, rc: c_int) -> Result<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(StoreError::Lmdb(op, rc))
    }
}

fn check_key(key: &[u8]) -> Result<()> {
    if key.is_empty() {
        Err(StoreError::BadArgument("key must not be empty".into()))
    } else if key.len() > MAX_KEY_BYTES {
        Err(StoreError::BadArgument(format!(
            "key is {} bytes; at most {MAX_KEY_BYTES} allowed",
            key.len()
        )))
    } else {
        Ok(())
    }
}

fn val(bytes: &[u8]) -> ffi::MDB_val {
    ffi::MDB_val {
        mv_size: bytes.len(),
        mv_data: bytes.as_ptr() as *mut c_void,
    }
}

/// # Safety
/// `v` must come from LMDB inside a transaction that outlives `'a`.
unsafe fn slice<'a>(v: &ffi::MDB_val) -> &'a [u8] {
    if v.mv_size == 0 {
        &[]
    } else {
        std::slice::from_raw_parts(v.mv_data as *const u8, v.mv_size)
    }
}

impl Store {
    fn env_ptr(&self) -> *mut ffi::MDB_env {
        self.env.env()
    }

    fn dbi(&self, table: Table) -> ffi::MDB_dbi {
        self.dbis[table.0 as usize]
    }

    fn info(&self) -> ffi::MDB_envinfo {
        env_info(self.env_ptr())
    }

    fn map_bytes(&self) -> usize {
        self.info().me_mapsize
    }

    fn used_bytes(&self) -> usize {
        used_bytes(self.env_ptr())
    }

    /// Without the writable map: keeps single pages cached ahead of the data, `used` bytes
    /// (`cache_ahead`), renewed once fewer than `margin` of them are left. The syncer renews
    /// them at half (`AHEAD_BYTES / 2`), off the serving thread (it costs about 1 ms); a write
    /// transaction does only when they are nearly used up (`WRITER_AHEAD_MARGIN`), as it
    /// must when there is no syncer or it fell behind.
    fn keep_ahead(&self, used: usize, margin: usize) {
        if !self.write_map && used + margin > self.cached_to.load(Ordering::Relaxed) {
            self.cached_to.fetch_max(cache_ahead(self.env_ptr(), used), Ordering::Relaxed);
        }
    }

    fn sync_env(&self) -> Result<()> {
        // SAFETY: the env is open.
        check("mdb_env_sync", unsafe {
            ffi::mdb_env_sync(self.env_ptr(), 1)
        })
    }
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
    let (env, write_map, reserved, cached_to) = open_env(&dir, map_bytes, opts.write_map)?;
    if opts.durable_commits {
        // With MDB_NOSYNC a commit leaves its pages and its meta page in the page cache, which
        // the kernel writes back in any order: a power loss before (or during) the fsync that
        // follows can leave a meta page on disk that points at pages that are not, and LMDB
        // opens the newest meta page, so the store would be corrupt, acknowledged data and
        // all. MDB_NOMETASYNC fsyncs a commit's pages before it writes the meta page (and
        // never reuses the pages of the two newest commits), so whatever subset reached the
        // disk opens as one of the last commits; `sync` then makes that meta page durable
        // before a reply leaves (src/store/durability.ts).
        // SAFETY: the env is open and no transaction is active; both flags may be changed.
        check("mdb_env_set_flags", unsafe { ffi::mdb_env_set_flags(env.env(), ffi::MDB_NOSYNC, 0) })?;
        check("mdb_env_set_flags", unsafe { ffi::mdb_env_set_flags(env.env(), ffi::MDB_NOMETASYNC, 1) })?;
    }
    let mut dead = 0;
    // SAFETY: the env is open. Clears reader slots left by killed processes.
    check("mdb_reader_check", unsafe {
        ffi::mdb_reader_check(env.env(), &mut dead)
    })?;
    let mut dbis = [0; TABLE_COUNT];
    for (i, name) in TABLES.iter().enumerate() {
        let db = match env.create_db(Some(name), DatabaseFlags::empty()) {
            Err(lmdb::Error::MapResized) => {
                // Another process grew the map since we opened: adopt its size, then retry.
                // SAFETY: no transaction is active on this new env.
                check("mdb_env_set_mapsize", unsafe {
                    ffi::mdb_env_set_mapsize(env.env(), 0)
                })?;
                env.create_db(Some(name), DatabaseFlags::empty())
            }
            other => other,
        };
        dbis[i] = db
            .map_err(|e| StoreError::Lmdb("create table", e.to_err_code()))?
            .dbi();
    }
    let generation = GENERATION.fetch_add(1, Ordering::Relaxed) + 1;
    let syncer = match opts.sync_interval_ms {
        0 => None,
        ms => Some(Syncer::spawn(generation, data_file(&env)?, Duration::from_millis(ms))),
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

/// Opens the environment. With `write_map`, commits write through a writable map
/// (MDB_WRITEMAP: no page copies into malloc'd buffers, no pwrite per dirty page — about 1.5x
/// the verifications per second), which is only safe when every page of the map has disk
/// blocks: a write fault on a sparse page with the disk full would be SIGBUS, killing the
/// process, instead of an error for one request. So the whole map is reserved with
/// fallocate first (here and at every growth, see `reserve`); when the filesystem cannot
/// (no fallocate support, or no room) the environment is reopened without the writable map.
/// The environment, whether it has the writable map, the bytes of the map reserved, and
/// the end of the pages cached ahead of the data (without the writable map, `cache_ahead`).
fn open_env(dir: &Path, map_bytes: usize, write_map: bool) -> Result<(Environment, bool, usize, usize)> {
    // mdb_env_open writes a new store's two meta pages in one 8 KiB write, which the kernel
    // may cache as one folio (see `drop_cached`): opened once more, they are read back as
    // single pages.
    if !dir.join("data.mdb").exists() {
        drop(open_env_once(dir, map_bytes, write_map)?);
    }
    open_env_once(dir, map_bytes, write_map)
}

fn open_env_once(dir: &Path, map_bytes: usize, write_map: bool) -> Result<(Environment, bool, usize, usize)> {
    let open = |flags: EnvironmentFlags| {
        Environment::new()
            .set_flags(flags)
            .set_max_dbs(64)
            .set_max_readers(512)
            .set_map_size(map_bytes)
            .open(dir)
            .map_err(|e| StoreError::Lmdb("mdb_env_open", e.to_err_code()))
    };
    // NO_READAHEAD: the map is madvise(MADV_RANDOM), see `drop_cached`.
    drop_cached(dir)?;
    let plain = EnvironmentFlags::NO_SYNC | EnvironmentFlags::NO_TLS | EnvironmentFlags::NO_READAHEAD;
    if write_map {
        let env = open(plain | EnvironmentFlags::WRITE_MAP)?;
        let map_bytes = env_info(env.env()).me_mapsize;
        if reserve(env.env(), map_bytes).is_ok() {
            read_in(env.env())?;
            return Ok((env, true, map_bytes, 0));
        }
        drop(env);
    }
    let env = open(plain)?;
    read_in(env.env())?;
    let cached_to = cache_ahead(env.env(), used_bytes(env.env()));
    Ok((env, false, 0, cached_to))
}

fn env_info(env: *mut ffi::MDB_env) -> ffi::MDB_envinfo {
    let mut info = ffi::MDB_envinfo { me_mapaddr: ptr::null_mut(), me_mapsize: 0, me_last_pgno: 0, me_last_txnid: 0, me_maxreaders: 0, me_numreaders: 0 };
    // SAFETY: the env is open; mdb_env_info only fills the struct (always returns 0).
    unsafe { ffi::mdb_env_info(env, &mut info) };
    info
}

/// Bytes of the data file in use: (last page number + 1) × page size.
fn used_bytes(env: *mut ffi::MDB_env) -> usize {
    let mut st = ffi::MDB_stat { ms_psize: 0, ms_depth: 0, ms_branch_pages: 0, ms_leaf_pages: 0, ms_overflow_pages: 0, ms_entries: 0 };
    // SAFETY: the env is open; mdb_env_stat only fills the struct.
    unsafe { ffi::mdb_env_stat(env, &mut st) };
    (env_info(env).me_last_pgno + 1) * st.ms_psize as usize
}

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
fn drop_cached(dir: &Path) -> Result<()> {
    if open_elsewhere(dir) {
        return Ok(());
    }
    let path = dir.join("data.mdb");
    let Ok(file) = fs::File::open(&path) else { return Ok(()) };
    // Dirty pages cannot be dropped: write back what a killed process left first.
    file.sync_data().map_err(|e| StoreError::Os(format!("cannot write back {}: {e}", path.display())))?;
    let fd = std::os::fd::AsRawFd::as_raw_fd(&file);
    // SAFETY: the descriptor is open for the duration of the calls.
    unsafe {
        libc::posix_fadvise(fd, 0, 0, libc::POSIX_FADV_DONTNEED);
        // mdb_env_open reads the meta pages with pread, whose readahead would cache the pages
        // after them in large folios again: have them cached already.
        libc::posix_fadvise(fd, 0, HEAD_BYTES, libc::POSIX_FADV_WILLNEED);
    }
    Ok(())
}

/// What `drop_cached` reads in ahead of mdb_env_open (the meta pages' readahead window).
const HEAD_BYTES: libc::off_t = 1 << 20;

/// Whether another process has the environment at `dir` open: LMDB holds a shared fcntl
/// lock on the first byte of lock.mdb for as long as it has an environment open (taken in
/// mdb_env_open, exclusive while it sets the lock file up). F_GETLK only asks, and never
/// reports this process's own locks. Nothing of this process has the lock file open here
/// (closing a descriptor drops every fcntl lock the process holds on the file).
fn open_elsewhere(dir: &Path) -> bool {
    let Ok(file) = fs::OpenOptions::new().read(true).write(true).open(dir.join("lock.mdb")) else { return false };
    // SAFETY: an all-zero flock is a valid value; fcntl only fills it.
    let mut lock: libc::flock = unsafe { std::mem::zeroed() };
    lock.l_type = libc::F_WRLCK as libc::c_short;
    lock.l_whence = libc::SEEK_SET as libc::c_short;
    lock.l_start = 0;
    lock.l_len = 1;
    // SAFETY: the descriptor is open and `lock` outlives the call.
    let rc = unsafe { libc::fcntl(std::os::fd::AsRawFd::as_raw_fd(&file), libc::F_GETLK, &mut lock) };
    rc == 0 && lock.l_type != libc::F_UNLCK as libc::c_short
}

/// How far ahead of the data single pages are kept cached without the writable map.
const AHEAD_BYTES: usize = 8 << 20;
/// See `keep_ahead`.
const WRITER_AHEAD_MARGIN: usize = AHEAD_BYTES / 8;

/// Without the writable map LMDB writes the pages the data grows into with pwrite, in runs
/// of consecutive new pages, and the kernel caches such a write in large folios (see
/// `drop_cached`). So the pages just past the data are cached ahead of time as single
/// pages: their disk blocks are allocated (fallocate, which extends the file) and read in
/// with POSIX_FADV_WILLNEED (zeros, nothing read from disk). Returns the end of that
/// region. Advice only: where the filesystem declines (no fallocate, disk full), nothing is
/// cached ahead and the writes work as before.
fn cache_ahead(env: *mut ffi::MDB_env, used: usize) -> usize {
    if let Ok(fd) = data_fd(env) {
        let (from, len) = (used as libc::off_t, AHEAD_BYTES as libc::off_t);
        // SAFETY: fd is the env's open data file.
        unsafe {
            if libc::fallocate(fd, 0, from, len) == 0 {
                libc::posix_fadvise(fd, from, len, libc::POSIX_FADV_WILLNEED);
            }
        }
    }
    used + AHEAD_BYTES
}

/// Reads the pages in use into the page cache in bulk (see `drop_cached`).
fn read_in(env: *mut ffi::MDB_env) -> Result<()> {
    let fd = data_fd(env)?;
    // SAFETY: fd is the env's open data file.
    unsafe { libc::posix_fadvise(fd, 0, used_bytes(env) as libc::off_t, libc::POSIX_FADV_WILLNEED) };
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
    let fd = std::os::fd::AsRawFd::as_raw_fd(&file);
    // SAFETY: fd is open for the duration of the calls; `byte` outlives each pread.
    unsafe { libc::posix_fadvise(fd, 0, 0, libc::POSIX_FADV_RANDOM) };
    let started = std::time::Instant::now();
    const PAGE: usize = 4096;
    // The clock is read once per 2 MiB.
    const CHECK_EVERY: usize = 512 * PAGE;
    let mut byte = 0u8;
    let mut off = 0;
    while off < used && started.elapsed() < budget {
        let end = (off + CHECK_EVERY).min(used);
        while off < end {
            // SAFETY: as above. A short read (the file is never shorter than the pages in use)
            // or an error only leaves the page to be read on demand.
            unsafe { libc::pread(fd, (&mut byte as *mut u8).cast(), 1, off as libc::off_t) };
            off += PAGE;
        }
    }
    Ok(Warmed { used_bytes: used as u64, read_bytes: off.min(used) as u64 })
}

/// The descriptor of the env's data file (owned by LMDB).
fn data_fd(env: *mut ffi::MDB_env) -> Result<c_int> {
    let mut fd: c_int = -1;
    // SAFETY: the env is open; mdb_env_get_fd only reads its descriptor.
    check("mdb_env_get_fd", unsafe { ffi::mdb_env_get_fd(env, &mut fd) })?;
    Ok(fd)
}

/// Allocates disk blocks for the first `bytes` of the data file (fallocate, keeping the
/// size), so writes through the map never meet ENOSPC. Idempotent; cheap for ranges that are
/// already allocated.
fn reserve(env: *mut ffi::MDB_env, bytes: usize) -> Result<()> {
    let fd = data_fd(env)?;
    // SAFETY: fd is the env's open data file.
    if unsafe { libc::fallocate(fd, 0, 0, bytes as libc::off_t) } == 0 {
        Ok(())
    } else {
        Err(StoreError::Lmdb("reserve disk space (fallocate)", std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO)))
    }
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
    // This thread's kept reader belongs to the env being closed: free it first. Other
    // threads' kept readers are never used again (their generation no longer matches).
    if let Some(c) = READER.with(|r| r.borrow_mut().take()) {
        if c.generation == store.generation {
            // SAFETY: a reset read txn of this env (still open), owned by this thread.
            unsafe { c.discard() };
        }
    }
    drop(store); // mdb_env_close
    synced
}

/// (the open environment's generation, the id of its last committed write transaction): it
/// changes whenever anything in the store may have changed, by any thread or process.
pub fn commit_mark() -> Result<(u64, u64)> {
    let guard = read_guard();
    let store = guard.as_ref().ok_or(StoreError::Closed)?;
    Ok((store.generation, store.info().me_last_txnid as u64))
}

/// mdb_env_sync(force = 1): everything committed so far reaches the disk.
pub fn sync() -> Result<()> {
    with_read(|store, _, _| store.sync_env())
}

pub fn stats() -> Result<Stats> {
    with_read(|store, txn, _| {
        let info = store.info();
        let mut st = ffi::MDB_stat {
            ms_psize: 0,
            ms_depth: 0,
            ms_branch_pages: 0,
            ms_leaf_pages: 0,
            ms_overflow_pages: 0,
            ms_entries: 0,
        };
        // SAFETY: the env is open.
        check("mdb_env_stat", unsafe {
            ffi::mdb_env_stat(store.env_ptr(), &mut st)
        })?;
        let page_size = st.ms_psize as u64;
        let mut entries = 0u64;
        for &dbi in &store.dbis {
            // SAFETY: txn is live for this closure; dbi belongs to this env.
            check("mdb_stat", unsafe { ffi::mdb_stat(txn, dbi, &mut st) })?;
            entries += st.ms_entries as u64;
        }
        Ok(Stats {
            used_bytes: (info.me_last_pgno as u64 + 1) * page_size,
            map_bytes: info.me_mapsize as u64,
            page_size,
            last_txn_id: info.me_last_txnid as u64,
            entries,
            write_map: store.write_map,
        })
    })
}

pub fn in_transaction() -> bool {
    ACTIVE.with(|a| a.borrow().is_some())
}

/// True inside a transaction body once a write hit MDB_MAP_FULL: the body's outcome will
/// be discarded and the body re-run (the JS boundary clears the pending exception then).
pub fn transaction_needs_retry() -> bool {
    ACTIVE.with(|a| a.borrow().as_ref().is_some_and(|t| t.map_full))
}

/// Runs `f` with a transaction to read through (and its cursors): this thread's write
/// transaction when inside `transaction`, otherwise a short read-only one. `f` must not call
/// back into the store.
fn with_read<R, E: From<StoreError>>(
    f: impl FnOnce(&Store, *mut ffi::MDB_txn, &Cursors) -> Result<R, E>,
) -> Result<R, E> {
    ACTIVE.with(|cell| {
        if let Some(active) = cell.borrow().as_ref() {
            if active.map_full {
                return Err(StoreError::RetryMapFull.into());
            }
            let store = active
                .guard
                .as_ref()
                .expect("store is open during a transaction");
            return f(store, active.txn, &active.cursors);
        }
        loop {
            let guard = read_guard();
            let store = guard.as_ref().ok_or(StoreError::Closed)?;
            // Reuse this thread's reset read transaction when it belongs to this environment
            // (renewing is much cheaper than beginning: no reader-table search).
            let cached = READER.with(|r| r.borrow_mut().take()).filter(|c| c.generation == store.generation);
            let (reader, rc) = match cached {
                // SAFETY: a reset read txn of this (still open) env, owned by this thread.
                Some(c) => {
                    let rc = unsafe { ffi::mdb_txn_renew(c.txn) };
                    (c, rc)
                }
                None => {
                    let mut txn = ptr::null_mut();
                    // SAFETY: env is open and we hold the read guard for the txn's whole life.
                    let rc = unsafe {
                        ffi::mdb_txn_begin(store.env_ptr(), ptr::null_mut(), ffi::MDB_RDONLY, &mut txn)
                    };
                    (CachedReader { txn, generation: store.generation, cursors: Cursors::new() }, rc)
                }
            };
            if rc == ffi::MDB_MAP_RESIZED {
                if !reader.txn.is_null() {
                    // SAFETY: the txn handle exists but is not active.
                    unsafe { reader.discard() };
                }
                drop(guard);
                adopt_map_size()?;
                continue;
            }
            check("mdb_txn_begin (read)", rc)?;
            reader.cursors.unbind();
            let end = ResetOnDrop(Some(reader));
            let reader = end.0.as_ref().expect("reader");
            return f(store, reader.txn, &reader.cursors);
        }
    })
}

/// A read transaction kept per thread between uses (reset, not aborted), with its cursors.
struct CachedReader {
    txn: *mut ffi::MDB_txn,
    generation: u64,
    cursors: Cursors,
}

impl CachedReader {
    /// Ends the read txn for good, with its kept cursors.
    ///
    /// # Safety
    /// The txn (not active: reset, or never begun) belongs to an environment that is still
    /// open and is not used again.
    unsafe fn discard(self) {
        self.cursors.close_read_cursors();
        ffi::mdb_txn_abort(self.txn);
    }
}

thread_local! {
    static READER: RefCell<Option<CachedReader>> = const { RefCell::new(None) };
}

/// Ends a read: resets the txn and keeps it for this thread's next read (or discards it when
/// the slot is taken by a nested read's txn, or the thread's slot is already gone).
struct ResetOnDrop(Option<CachedReader>);

impl Drop for ResetOnDrop {
    fn drop(&mut self) {
        let Some(reader) = self.0.take() else { return };
        // SAFETY: the txn is live, read-only and owned by this guard.
        unsafe { ffi::mdb_txn_reset(reader.txn) };
        let mut reader = Some(reader);
        let _ = READER.try_with(|r| {
            if let Ok(mut slot) = r.try_borrow_mut() {
                if slot.is_none() {
                    *slot = reader.take();
                }
            }
        });
        if let Some(reader) = reader {
            // SAFETY: a reset txn handle of the open env, not kept, so not used again.
            unsafe { reader.discard() };
        }
    }
}

/// Runs `f` with this thread's write transaction; `NotInTxn` outside `transaction`.
/// A `RetryMapFull` from `f` dooms the transaction.
fn with_write<R>(f: impl FnOnce(&Store, *mut ffi::MDB_txn, &Cursors) -> Result<R>) -> Result<R> {
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
        let result = f(store, active.txn, &active.cursors);
        if matches!(result, Err(StoreError::RetryMapFull)) {
            active.map_full = true;
        }
        result
    })
}

struct CursorGuard(*mut ffi::MDB_cursor);

impl Drop for CursorGuard {
    fn drop(&mut self) {
        // SAFETY: the cursor is live and its txn outlives this guard.
        unsafe { ffi::mdb_cursor_close(self.0) }
    }
}

/// One consistent read of several records (the hot procedures use it): this thread's write
/// transaction inside `transaction`, otherwise one short read-only transaction. Slices
/// returned by `get` live as long as the view.
pub struct View<'t> {
    store: &'t Store,
    txn: *mut ffi::MDB_txn,
    cursors: &'t Cursors,
}

impl<'t> View<'t> {
    pub fn get(&self, table: Table, key: &[u8]) -> Result<Option<&'t [u8]>> {
        check_key(key)?;
        // SAFETY: the view's txn is live for 't.
        unsafe { cursor_get(self.cursors.cursor(self.store, self.txn, table)?, key) }
    }

    /// The generation of the store this view reads (see `last_generation`).
    pub fn generation(&self) -> u64 {
        self.store.generation
    }

    /// The id of the last write transaction committed when this view's snapshot was taken
    /// (by any thread or process): two views with one id read the same data.
    pub fn snapshot_id(&self) -> u64 {
        // SAFETY: the view's txn is live for 't.
        let id = unsafe { ffi::mdb_txn_id(self.txn) } as u64;
        // A view inside this thread's write transaction reads through it, and a write
        // transaction's id is the one it will commit as.
        id - u64::from(in_transaction())
    }

    /// The last key of the table, if it has any (slice lives as the view).
    pub fn last_key(&self, table: Table) -> Result<Option<&'t [u8]>> {
        let cursor = self.cursors.cursor(self.store, self.txn, table)?;
        let (mut k, mut v) = (val(&[]), val(&[]));
        // SAFETY: the cursor belongs to the view's txn, live for 't; k/v are filled by LMDB.
        match unsafe { ffi::mdb_cursor_get(cursor, &mut k, &mut v, ffi::MDB_LAST) } {
            0 => Ok(Some(unsafe { slice(&k) })),
            ffi::MDB_NOTFOUND => Ok(None),
            rc => Err(StoreError::Lmdb("get", rc)),
        }
    }

    /// The first key `>= key` in the table, if any (slice lives as the view).
    pub fn first_key_from(&self, table: Table, key: &[u8]) -> Result<Option<&'t [u8]>> {
        check_key(key)?;
        let cursor = self.cursors.cursor(self.store, self.txn, table)?;
        let mut k = val(key);
        let mut v = val(&[]);
        // SAFETY: the cursor belongs to the view's txn, live for 't; k/v are filled by LMDB.
        match unsafe { ffi::mdb_cursor_get(cursor, &mut k, &mut v, ffi::MDB_SET_RANGE) } {
            0 => Ok(Some(unsafe { slice(&k) })),
            ffi::MDB_NOTFOUND => Ok(None),
            rc => Err(StoreError::Lmdb("get", rc)),
        }
    }

    /// Entries with start <= key < end in order, at most `limit` (slices live as the view).
    pub fn range<E: From<StoreError>>(
        &self,
        table: Table,
        start: &[u8],
        end: Option<&[u8]>,
        limit: usize,
        mut visit: impl FnMut(&'t [u8], &'t [u8]) -> Result<(), E>,
    ) -> Result<(), E> {
        scan(self.store, self.txn, table, start, end, limit, &mut visit)
    }

    /// Entries whose key starts with `prefix`, in order, at most `limit` (as `range`).
    pub fn range_prefix<E: From<StoreError>>(
        &self,
        table: Table,
        prefix: &[u8],
        limit: usize,
        visit: impl FnMut(&'t [u8], &'t [u8]) -> Result<(), E>,
    ) -> Result<(), E> {
        // Just past every key under the prefix: its last byte below 0xff, one up, and what
        // follows dropped (none when the prefix is all 0xff).
        let end = prefix.iter().rposition(|&b| b < 0xff).map(|i| {
            let mut end = prefix[..=i].to_vec();
            end[i] += 1;
            end
        });
        self.range(table, prefix, end.as_deref(), limit, visit)
    }
}

/// The value under `key` through `cursor` (which is left on it, or near it).
///
/// # Safety
/// `cursor` belongs to a live txn that outlives `'t`.
unsafe fn cursor_get<'t>(cursor: *mut ffi::MDB_cursor, key: &[u8]) -> Result<Option<&'t [u8]>> {
    let mut k = val(key);
    let mut v = val(&[]);
    match ffi::mdb_cursor_get(cursor, &mut k, &mut v, ffi::MDB_SET) {
        // SAFETY: v points into the map (or a dirty page of the txn), valid while it lives.
        0 => Ok(Some(slice(&v))),
        ffi::MDB_NOTFOUND => Ok(None),
        rc => Err(StoreError::Lmdb("get", rc)),
    }
}

/// Runs `f` over one read view (see `View`). `f` must not call back into the store.
pub fn view<R, E: From<StoreError>>(f: impl FnOnce(&View<'_>) -> Result<R, E>) -> Result<R, E> {
    with_read(|store, txn, cursors| f(&View { store, txn, cursors }))
}

/// Calls `f` with the value stored under `key` (valid only during `f`), or `None`.
pub fn get<R>(table: Table, key: &[u8], f: impl FnOnce(Option<&[u8]>) -> R) -> Result<R> {
    check_key(key)?;
    // SAFETY: the cursor belongs to the txn of this closure.
    with_read(|store, txn, cursors| Ok(f(unsafe { cursor_get(cursors.cursor(store, txn, table)?, key)? })))
}

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
    with_write(|store, txn, cursors| {
        let cursor = cursors.cursor(store, txn, Table::META)?;
        // SAFETY: the cursor belongs to this thread's live write txn.
        let epoch = epoch_value(unsafe { cursor_get(cursor, RECORDS_EPOCH)? });
        raw_put(cursor, RECORDS_EPOCH, &(epoch + 1).to_le_bytes())
    })
}

fn raw_put(cursor: *mut ffi::MDB_cursor, key: &[u8], value: &[u8]) -> Result<()> {
    let (mut k, mut v) = (val(key), val(value));
    // SAFETY: the caller passes a cursor of this thread's live write txn.
    match unsafe { ffi::mdb_cursor_put(cursor, &mut k, &mut v, 0) } {
        0 => Ok(()),
        ffi::MDB_MAP_FULL => Err(StoreError::RetryMapFull),
        rc => Err(StoreError::Lmdb("put", rc)),
    }
}

/// Inserts or replaces. Only inside `transaction`. A record change (see `RECORDS_EPOCH`).
pub fn put(table: Table, key: &[u8], value: &[u8]) -> Result<()> {
    check_key(key)?;
    only_through_counterlog(table)?;
    note_records_change()?;
    put_counter(table, key, value)
}

/// The counter log is written only by counterlog.rs, which keeps its index equal to it.
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
    with_write(|store, txn, cursors| {
        let cursor = cursors.cursor(store, txn, table)?;
        let (mut k, mut v) = (val(key), val(value));
        // SAFETY: the cursor belongs to this thread's live write txn.
        match unsafe { ffi::mdb_cursor_put(cursor, &mut k, &mut v, ffi::MDB_APPEND) } {
            0 => Ok(()),
            ffi::MDB_MAP_FULL => Err(StoreError::RetryMapFull),
            rc => Err(StoreError::Lmdb("append", rc)),
        }
    })
}

/// Runs `f` with the counter log of this thread's write transaction (None outside one).
/// `f` must not call back into the store.
pub fn with_txn_log<R>(f: impl FnOnce(&mut TxnLog) -> R) -> Option<R> {
    ACTIVE.with(|a| a.borrow().as_ref().map(|t| f(&mut t.log.borrow_mut())))
}

/// `put` for the counters of the hot calls (a credit balance, a window) and the counter log's
/// own state: leaves the records epoch alone. Only for values no cached answer is computed
/// from.
pub fn put_counter(table: Table, key: &[u8], value: &[u8]) -> Result<()> {
    check_key(key)?;
    with_write(|store, txn, cursors| raw_put(cursors.cursor(store, txn, table)?, key, value))
}

/// Deletes `key`; true if it existed. Only inside `transaction`. A record change (see
/// `RECORDS_EPOCH`).
pub fn del(table: Table, key: &[u8]) -> Result<bool> {
    check_key(key)?;
    only_through_counterlog(table)?;
    note_records_change()?;
    del_counter(table, key)
}

/// `del` for a counter of the hot calls (a stale window): leaves the records epoch alone.
pub fn del_counter(table: Table, key: &[u8]) -> Result<bool> {
    check_key(key)?;
    with_write(|store, txn, cursors| {
        let cursor = cursors.cursor(store, txn, table)?;
        // SAFETY: the cursor belongs to this thread's live write txn.
        if unsafe { cursor_get(cursor, key)? }.is_none() {
            return Ok(false);
        }
        // SAFETY: as above; the cursor is on `key`.
        match unsafe { ffi::mdb_cursor_del(cursor, 0) } {
            0 => Ok(true),
            ffi::MDB_MAP_FULL => Err(StoreError::RetryMapFull),
            rc => Err(StoreError::Lmdb("del", rc)),
        }
    })
}

/// Visits entries with `start <= key < end` (`end: None` = to the end of the table; empty
/// `start` = from the first key) in ascending byte order, at most `limit` of them. Slices are
/// valid only during each `visit` call.
pub fn range<E: From<StoreError>>(
    table: Table,
    start: &[u8],
    end: Option<&[u8]>,
    limit: usize,
    mut visit: impl FnMut(&[u8], &[u8]) -> Result<(), E>,
) -> Result<(), E> {
    let too_long = |b: &[u8]| b.len() > MAX_KEY_BYTES;
    if too_long(start) || end.is_some_and(too_long) {
        return Err(StoreError::BadArgument(format!(
            "range bounds must be at most {MAX_KEY_BYTES} bytes"
        ))
        .into());
    }
    if limit == 0 {
        return Ok(());
    }
    with_read(|store, txn, _| scan(store, txn, table, start, end, limit, &mut visit))
}

/// The cursor walk of `range` over a given transaction; slices live as long as `txn` ('t).
fn scan<'t, E: From<StoreError>>(
    store: &Store,
    txn: *mut ffi::MDB_txn,
    table: Table,
    start: &[u8],
    end: Option<&[u8]>,
    limit: usize,
    visit: &mut impl FnMut(&'t [u8], &'t [u8]) -> Result<(), E>,
) -> Result<(), E> {
    let mut cursor = ptr::null_mut();
    // SAFETY: txn live; the cursor is closed by the guard before the txn ends.
    check("mdb_cursor_open", unsafe {
        ffi::mdb_cursor_open(txn, store.dbi(table), &mut cursor)
    })?;
    let cursor = CursorGuard(cursor);
    let mut k = val(start);
    let mut v = val(&[]);
    let mut op = if start.is_empty() {
        ffi::MDB_FIRST
    } else {
        ffi::MDB_SET_RANGE
    };
    let mut seen = 0;
    while seen < limit {
        // SAFETY: cursor live; k/v are filled by LMDB.
        match unsafe { ffi::mdb_cursor_get(cursor.0, &mut k, &mut v, op) } {
            0 => {}
            ffi::MDB_NOTFOUND => break,
            rc => return Err(StoreError::Lmdb("range", rc).into()),
        }
        // SAFETY: k/v point into the map while the txn lives.
        let key: &'t [u8] = unsafe { slice(&k) };
        if end.is_some_and(|end| key >= end) {
            break;
        }
        visit(key, unsafe { slice(&v) })?;
        seen += 1;
        op = ffi::MDB_NEXT;
    }
    Ok(())
}

/// Runs `body` inside one LMDB write transaction on this thread: commits if it returns Ok,
/// aborts and returns its error otherwise.
///
/// The body may run more than once: when a write hits MDB_MAP_FULL (or the commit does),
/// the transaction is aborted, the map doubled and `body` re-run from scratch. Bodies must
/// therefore have no side effects outside the store. Nested calls are `NestedTxn`.
pub fn transaction<T, E: From<StoreError>>(mut body: impl FnMut() -> Result<T, E>) -> Result<T, E> {
    if in_transaction() {
        return Err(StoreError::NestedTxn("transaction").into());
    }
    loop {
        let map_bytes = begin_active(false)?;
        let unwind = AbortActiveOnUnwind;
        let mut result = body();
        if result.is_ok() {
            if let Err(e) = counterlog::before_commit() {
                result = Err(e.into());
            }
        }
        std::mem::forget(unwind);
        let active = ACTIVE
            .with(|a| a.borrow_mut().take())
            .expect("active transaction");
        let ActiveTxn {
            txn,
            map_full,
            guard,
            log,
            ..
        } = active;
        if map_full {
            // SAFETY: txn is live; after abort it is freed.
            unsafe { ffi::mdb_txn_abort(txn) };
            drop(guard);
            grow_map(map_bytes)?;
            continue;
        }
        let value = match result {
            Ok(value) => value,
            Err(e) => {
                // SAFETY: as above.
                unsafe { ffi::mdb_txn_abort(txn) };
                return Err(e);
            }
        };
        // SAFETY: txn is live; commit frees it whether or not it succeeds.
        let rc = counterlog::commit(log.into_inner(), || unsafe { ffi::mdb_txn_commit(txn) });
        drop(guard);
        match rc {
            0 => return Ok(value),
            ffi::MDB_MAP_FULL => grow_map(map_bytes)?,
            rc => return Err(StoreError::Lmdb("commit", rc).into()),
        }
    }
}

/// Begins this thread's write transaction (adopting a map grown by another process; for a
/// batch, growing the map ahead once it is past ¾ full, see `batch_begin`) and keeps it in
/// ACTIVE with the store's read guard. Returns the map size it began with.
fn begin_active(batch: bool) -> Result<usize> {
    loop {
        let guard = read_guard();
        let store = guard.as_ref().ok_or(StoreError::Closed)?;
        let (env, map_bytes, used) = (store.env_ptr(), store.map_bytes(), store.used_bytes());
        if batch && used.saturating_mul(4) > map_bytes.saturating_mul(3) {
            drop(guard);
            grow_map(map_bytes)?;
            continue;
        }
        if store.write_map && store.reserved.load(Ordering::Relaxed) < map_bytes {
            reserve(env, map_bytes)?;
            store.reserved.store(map_bytes, Ordering::Relaxed);
        }
        store.keep_ahead(used, WRITER_AHEAD_MARGIN);
        let mut txn = ptr::null_mut();
        // SAFETY: env is open and the read guard moves into ACTIVE with the txn.
        let rc = unsafe { ffi::mdb_txn_begin(env, ptr::null_mut(), 0, &mut txn) };
        if rc == ffi::MDB_MAP_RESIZED {
            drop(guard);
            adopt_map_size()?;
            continue;
        }
        check("mdb_txn_begin (write)", rc)?;
        ACTIVE.with(|a| {
            *a.borrow_mut() = Some(ActiveTxn {
                txn,
                map_full: false,
                batch,
                records_changed: false,
                log: RefCell::new(TxnLog::default()),
                cursors: Cursors::new(),
                guard,
            })
        });
        return Ok(map_bytes);
    }
}

/// Group commit for the hot procedures: one write transaction that stays open on this
/// thread across several calls (those of one event-loop turn) until `batch_commit`. The
/// caller holds every reply until that commit succeeded, so "committed before the reply"
/// still holds. The map is grown ahead (past ¾ full) so a batch does not meet MAP_FULL;
/// if it does anyway, the whole batch is discarded (`RetryMapFull`) and nothing of it was
/// acknowledged.
pub fn batch_begin() -> Result<()> {
    if in_transaction() {
        return Err(StoreError::NestedTxn("batch"));
    }
    begin_active(true).map(|_| ())
}

pub fn in_batch() -> bool {
    ACTIVE.with(|a| a.borrow().as_ref().is_some_and(|t| t.batch))
}

/// This thread's open batch, taken out of ACTIVE (None when it has none open).
fn take_batch() -> Option<ActiveTxn> {
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
    // SAFETY: the txn is live; dropping `active` then releases the guard.
    unsafe { ffi::mdb_txn_abort(active.txn) };
    true
}

/// Commits this thread's batch; Ok(false) when none is open.
pub fn batch_commit() -> Result<bool> {
    let collected = if in_batch() { counterlog::before_commit() } else { Ok(()) };
    let Some(ActiveTxn { txn, map_full, guard, log, .. }) = take_batch() else {
        return Ok(false);
    };
    let map_bytes = guard.as_ref().map_or(0, |s| s.map_bytes());
    if map_full {
        // SAFETY: txn is live; after abort it is freed.
        unsafe { ffi::mdb_txn_abort(txn) };
        drop(guard);
        grow_map(map_bytes)?;
        return Err(StoreError::RetryMapFull);
    }
    if let Err(e) = collected {
        // SAFETY: as above.
        unsafe { ffi::mdb_txn_abort(txn) };
        return Err(e);
    }
    // SAFETY: txn is live; commit frees it whether or not it succeeds.
    let rc = counterlog::commit(log.into_inner(), || unsafe { ffi::mdb_txn_commit(txn) });
    drop(guard);
    match rc {
        0 => Ok(true),
        ffi::MDB_MAP_FULL => {
            grow_map(map_bytes)?;
            Err(StoreError::RetryMapFull)
        }
        rc => Err(StoreError::Lmdb("commit", rc)),
    }
}

/// On a panic in the body, aborts the thread's transaction and releases its guard.
struct AbortActiveOnUnwind;

impl Drop for AbortActiveOnUnwind {
    fn drop(&mut self) {
        let _ = ACTIVE.try_with(|a| {
            if let Ok(mut a) = a.try_borrow_mut() {
                if let Some(active) = a.take() {
                    // SAFETY: the txn is live; dropping `active` then releases the guard.
                    unsafe { ffi::mdb_txn_abort(active.txn) };
                }
            }
        });
    }
}

/// Doubles the map unless someone already grew it past `seen_map_bytes`.
fn grow_map(seen_map_bytes: usize) -> Result<()> {
    let slot = write_guard();
    let store = slot.as_ref().ok_or(StoreError::Closed)?;
    if store.map_bytes() > seen_map_bytes {
        return Ok(());
    }
    let target = seen_map_bytes.saturating_mul(2);
    if target > MAX_MAP_BYTES {
        return Err(StoreError::Lmdb(
            "grow map (at maximum size)",
            ffi::MDB_MAP_FULL,
        ));
    }
    if store.write_map {
        // The new pages need disk blocks before the map may reach them (see open_env); when
        // the disk has no room the map stays as it is and the write fails cleanly.
        reserve(store.env_ptr(), target)?;
        store.reserved.store(target, Ordering::Relaxed);
    }
    // SAFETY: we hold STORE in write mode, so no transaction of this process is active.
    let rc = unsafe { ffi::mdb_env_set_mapsize(store.env_ptr(), target) };
    if rc != 0 {
        // Leave the environment mapped at its previous size rather than unusable.
        // SAFETY: as above.
        unsafe { ffi::mdb_env_set_mapsize(store.env_ptr(), seen_map_bytes) };
        return Err(StoreError::Lmdb("grow map", rc));
    }
    Ok(())
}

/// After MDB_MAP_RESIZED (another process grew the map): adopt the size in the meta page.
fn adopt_map_size() -> Result<()> {
    let slot = write_guard();
    let store = slot.as_ref().ok_or(StoreError::Closed)?;
    // SAFETY: we hold STORE in write mode, so no transaction of this process is active.
    check("mdb_env_set_mapsize", unsafe {
        ffi::mdb_env_set_mapsize(store.env_ptr(), 0)
    })?;
    // The process that grew it reserved the blocks unless it runs without the writable map.
    // When that fails here (disk full), reads go on; writes wait for it (begin_active).
    if store.write_map && reserve(store.env_ptr(), store.map_bytes()).is_ok() {
        store.reserved.store(store.map_bytes(), Ordering::Relaxed);
    }
    Ok(())
}

/// A file of its own on the environment's data file (a duplicate of LMDB's descriptor), for
/// the syncer: it stays open while the environment is closed or its map replaced.
fn data_file(env: &Environment) -> Result<fs::File> {
    let fd = data_fd(env.env())?;
    // SAFETY: fd is LMDB's open descriptor, open for as long as this borrow (the env is open).
    let borrowed = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
    // try_clone_to_owned duplicates it (F_DUPFD_CLOEXEC) into a descriptor the File owns.
    let own = borrowed
        .try_clone_to_owned()
        .map_err(|e| StoreError::Os(format!("cannot duplicate the data file descriptor: {e}")))?;
    Ok(fs::File::from(own))
}

#[cfg(test)]
static SLOW_SYNC_MS: AtomicU64 = AtomicU64::new(0);

/// Puts the calling thread at the lowest priority a thread can set without privileges:
/// SCHED_BATCH (its wake-ups never preempt a running thread) at nice 19 (when threads
/// compete for a CPU it gets about 1.5% of it, enough for an fsync's CPU every interval, so
/// the interval still bounds what an OS crash can lose). Best effort: left as it is where
/// the system refuses.
fn yield_to_serving_threads() {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: plain system calls on the calling thread (pid 0) with a valid parameter.
    unsafe {
        libc::sched_setscheduler(0, libc::SCHED_BATCH, &param);
        // Linux keeps nice per thread: PRIO_PROCESS with 0 is the calling thread.
        libc::setpriority(libc::PRIO_PROCESS, 0, 19);
    }
}

/// Background thread that, every interval until stopped or until the store it was started
/// for is closed, renews the pages cached ahead (`keep_ahead`) and fsyncs the data file
/// (fdatasync, which on Linux also writes back pages changed through the writable map; what
/// mdb_env_sync(force) does with MDB_NOSYNC). Sync failures are retried on the next tick.
///
/// The fsync runs without holding `STORE`: under a write load it can take as long as the
/// disk needs for what changed since the last one (tens of milliseconds, more on a slow
/// disk), and a map growth (write mode) waiting behind it would stall every caller.
///
/// It runs at the lowest priority (`yield_to_serving_threads`): an fsync spends about half
/// a millisecond of CPU at a time in the kernel, queueing the pages for the disk, and at
/// normal priority it took that CPU from the serving thread it woke next to (the serving
/// thread waited, runnable, while the other CPU was idle: every fsync, a p99 outlier).
struct Syncer {
    stop: Arc<(Mutex<bool>, Condvar)>,
    handle: JoinHandle<()>,
}

impl Syncer {
    fn spawn(generation: u64, file: fs::File, interval: Duration) -> Syncer {
        let stop = Arc::new((Mutex::new(false), Condvar::new()));
        let signal = Arc::clone(&stop);
        let handle = std::thread::Builder::new()
            .name("keyward-lmdb-sync".into())
            .spawn(move || {
                yield_to_serving_threads();
                Syncer::run(&signal, generation, &file, interval)
            })
            .expect("spawn sync thread");
        Syncer { stop, handle }
    }

    fn run((lock, cv): &(Mutex<bool>, Condvar), generation: u64, file: &fs::File, interval: Duration) {
        loop {
            let deadline = Instant::now() + interval;
            let mut stopped = lock.lock().unwrap_or_else(PoisonError::into_inner);
            while !*stopped {
                let now = Instant::now();
                if now >= deadline {
                    break;
                }
                stopped = cv
                    .wait_timeout(stopped, deadline - now)
                    .unwrap_or_else(PoisonError::into_inner)
                    .0;
            }
            if *stopped {
                return;
            }
            drop(stopped);
            {
                let slot = read_guard();
                match slot.as_ref() {
                    Some(store) if store.generation == generation => {
                        store.keep_ahead(store.used_bytes(), AHEAD_BYTES / 2);
                    }
                    _ => return,
                }
            }
            #[cfg(test)]
            std::thread::sleep(Duration::from_millis(SLOW_SYNC_MS.load(Ordering::Relaxed)));
            let _ = file.sync_data();
        }
    }

    fn stop(self) {
        let (lock, cv) = &*self.stop;
        *lock.lock().unwrap_or_else(PoisonError::into_inner) = true;
        cv.notify_all();
        let _ = self.handle.join();
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::sync::MutexGuard;

    // The store is process-wide, so tests that open it run one at a time.
    static SERIAL: Mutex<()> = Mutex::new(());

    /// A store of its own in a temporary directory, open while the fixture lives (other
    /// modules' tests use it too).
    pub(crate) struct Fixture {
        dir: PathBuf,
        _serial: MutexGuard<'static, ()>,
    }

    impl Fixture {
        pub(crate) fn new(name: &str, initial_map_bytes: usize) -> Fixture {
            let serial = SERIAL.lock().unwrap_or_else(PoisonError::into_inner);
            let _ = close();
            let dir =
                std::env::temp_dir().join(format!("keyward-store-{}-{name}", std::process::id()));
            let _ = fs::remove_dir_all(&dir);
            let fixture = Fixture {
                dir,
                _serial: serial,
            };
            fixture.open(initial_map_bytes);
            fixture
        }

        pub(crate) fn open(&self, initial_map_bytes: usize) {
            let opts = OpenOptions {
                sync_interval_ms: 0,
                initial_map_bytes,
                write_map: false,
                durable_commits: false,
            };
            open(&self.dir, &opts).unwrap();
        }
    }

    impl Drop for Fixture {
        fn drop(&mut self) {
            let _ = close();
            let _ = fs::remove_dir_all(&self.dir);
        }
    }

    fn t(name: &str) -> Table {
        Table::from_name(name.as_bytes()).unwrap()
    }

    fn get_vec(table: Table, key: &[u8]) -> Option<Vec<u8>> {
        get(table, key, |v| v.map(<[u8]>::to_vec)).unwrap()
    }

    fn put_one(table: Table, key: &[u8], value: &[u8]) {
        transaction(|| put(table, key, value)).unwrap();
    }

    fn collect(
        table: Table,
        start: &[u8],
        end: Option<&[u8]>,
        limit: usize,
    ) -> Vec<(Vec<u8>, Vec<u8>)> {
        let mut out = Vec::new();
        range(table, start, end, limit, |k, v| {
            out.push((k.to_vec(), v.to_vec()));
            Ok::<_, StoreError>(())
        })
        .unwrap();
        out
    }

    #[test]
    fn table_names_resolve_both_ways() {
        for name in TABLES {
            assert_eq!(Table::from_name(name.as_bytes()).unwrap().name(), name);
        }
        assert_eq!(Table::from_name(b"nope"), None);
        assert_eq!(Table::from_name(b""), None);
    }

    #[test]
    fn put_get_del_roundtrip() {
        let _f = Fixture::new("roundtrip", 0);
        let apis = t("apis");
        assert_eq!(get_vec(apis, b"a"), None);
        put_one(apis, b"a", b"1");
        assert_eq!(get_vec(apis, b"a"), Some(b"1".to_vec()));
        assert_eq!(get_vec(t("keys"), b"a"), None, "tables are separate");
        assert!(transaction(|| del(apis, b"a")).unwrap());
        assert!(!transaction(|| del(apis, b"a")).unwrap());
        assert_eq!(get_vec(apis, b"a"), None);
    }

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
    fn key_size_is_checked() {
        let _f = Fixture::new("keysize", 0);
        let meta = t("meta");
        assert!(matches!(
            get(meta, b"", |_| ()),
            Err(StoreError::BadArgument(_))
        ));
        assert!(matches!(
            get(meta, &[b'x'; 512], |_| ()),
            Err(StoreError::BadArgument(_))
        ));
        put_one(meta, &[b'x'; 511], b"max");
        assert_eq!(get_vec(meta, &[b'x'; 511]), Some(b"max".to_vec()));
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
    fn range_is_start_inclusive_end_exclusive_and_limited() {
        let _f = Fixture::new("range", 0);
        let roles = t("roles");
        transaction(|| {
            for k in ["a", "b", "ba", "c", "d"] {
                put(roles, k.as_bytes(), k.to_uppercase().as_bytes())?;
            }
            Ok::<_, StoreError>(())
        })
        .unwrap();
        let keys = |r: Vec<(Vec<u8>, Vec<u8>)>| {
            r.into_iter()
                .map(|(k, _)| String::from_utf8(k).unwrap())
                .collect::<Vec<_>>()
        };
        assert_eq!(
            keys(collect(roles, b"b", Some(b"d"), 100)),
            ["b", "ba", "c"]
        );
        assert_eq!(keys(collect(roles, b"b", None, 100)), ["b", "ba", "c", "d"]);
        assert_eq!(keys(collect(roles, b"", None, 2)), ["a", "b"]);
        assert_eq!(keys(collect(roles, b"bb", Some(b"z"), 1)), ["c"]);
        assert!(collect(roles, b"a", None, 0).is_empty());
        assert!(collect(roles, b"e", None, 10).is_empty());
        assert_eq!(
            collect(roles, b"c", Some(b"d"), 10),
            [(b"c".to_vec(), b"C".to_vec())]
        );
    }

    #[test]
    fn range_prefix_is_every_key_under_the_prefix_and_only_those() {
        let _f = Fixture::new("range-prefix", 0);
        let roles = t("roles");
        let keys: [&[u8]; 7] = [b"a/", b"a/1", b"a/2\xff", b"a0", b"b", b"\xff\x01", b"\xff\xff"];
        transaction(|| keys.iter().try_for_each(|k| put(roles, k, b"v"))).unwrap();
        let under = |prefix: &[u8]| {
            let mut out = Vec::new();
            view(|v| {
                v.range_prefix(roles, prefix, 100, |k, _| {
                    out.push(k.to_vec());
                    Ok::<_, StoreError>(())
                })
            })
            .unwrap();
            out
        };
        assert_eq!(under(b"a/"), [b"a/".to_vec(), b"a/1".to_vec(), b"a/2\xff".to_vec()]);
        assert_eq!(under(b"a/2\xff"), [b"a/2\xff".to_vec()]);
        assert_eq!(under(b"\xff"), [b"\xff\x01".to_vec(), b"\xff\xff".to_vec()]);
        assert_eq!(under(b"\xff\xff"), [b"\xff\xff".to_vec()]);
        assert!(under(b"c").is_empty());
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

    /// The environment flags of the open store.
    fn env_flags() -> u32 {
        let mut flags = 0;
        with_read(|store, _, _| {
            // SAFETY: the env is open; mdb_env_get_flags only fills `flags`.
            check("mdb_env_get_flags", unsafe { ffi::mdb_env_get_flags(store.env_ptr(), &mut flags) })
        })
        .unwrap();
        flags
    }

    #[test]
    fn disk_durability_syncs_a_commits_pages_before_its_meta_page() {
        let f = Fixture::new("durable", 0);
        let flags = env_flags();
        assert!(flags & ffi::MDB_NOSYNC != 0 && flags & ffi::MDB_NOMETASYNC == 0, "process: commits reach the page cache only");
        close().unwrap();
        open(&f.dir, &OpenOptions { sync_interval_ms: 0, initial_map_bytes: 0, write_map: false, durable_commits: true }).unwrap();
        let flags = env_flags();
        assert!(flags & ffi::MDB_NOSYNC == 0, "disk: a commit fsyncs its pages");
        assert!(flags & ffi::MDB_NOMETASYNC != 0, "disk: the meta page is made durable by sync()");
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

    #[test]
    fn a_map_growth_does_not_wait_for_the_background_fsync() {
        let f = Fixture::new("slow-sync", 64 * 1024);
        close().unwrap();
        // Every background fsync now takes at least 600 ms, as on a disk behind on its writes.
        SLOW_SYNC_MS.store(600, Ordering::Relaxed);
        let opts = OpenOptions { sync_interval_ms: 5, initial_map_bytes: 64 * 1024, write_map: false, durable_commits: false };
        open(&f.dir, &opts).unwrap();
        std::thread::sleep(Duration::from_millis(100)); // the syncer is inside its fsync
        let before = stats().unwrap().map_bytes as usize;
        let started = Instant::now();
        grow_map(before).unwrap();
        let waited = started.elapsed();
        SLOW_SYNC_MS.store(0, Ordering::Relaxed);
        assert_eq!(stats().unwrap().map_bytes as usize, before * 2);
        close().unwrap();
        assert!(waited < Duration::from_millis(250), "the growth waited {waited:?} for the fsync");
    }

    /// nice and scheduling policy of this process's thread named `name` (/proc: fields 19 and
    /// 41 of its stat line, counted from the pid).
    fn thread_priority(name: &str) -> Option<(i64, i64)> {
        for task in fs::read_dir("/proc/self/task").ok()? {
            let path = task.ok()?.path();
            if fs::read_to_string(path.join("comm")).ok()?.trim() != name {
                continue;
            }
            let stat = fs::read_to_string(path.join("stat")).ok()?;
            // After "pid (comm) ", the fields from the state (field 3) on.
            let fields: Vec<&str> = stat[stat.rfind(')')? + 2..].split(' ').collect();
            return Some((fields[19 - 3].parse().ok()?, fields[41 - 3].parse().ok()?));
        }
        None
    }

    #[test]
    fn the_background_syncer_runs_at_the_lowest_priority() {
        let f = Fixture::new("syncer-priority", 64 * 1024);
        close().unwrap();
        open(&f.dir, &OpenOptions { sync_interval_ms: 5, initial_map_bytes: 64 * 1024, write_map: false, durable_commits: false }).unwrap();
        let mut seen = None;
        for _ in 0..100 {
            seen = thread_priority("keyward-lmdb-sy"); // comm keeps 15 bytes of the name
            if seen.is_some_and(|(nice, _)| nice == 19) {
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        close().unwrap();
        assert_eq!(seen, Some((19, i64::from(libc::SCHED_BATCH))), "(nice, policy) of the syncer");
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
        std::thread::sleep(Duration::from_millis(20));
        close().unwrap();
    }

    #[test]
    fn error_messages_name_the_lmdb_error() {
        assert!(StoreError::Lmdb("put", ffi::MDB_MAP_FULL)
            .to_string()
            .contains("MDB_MAP_FULL"));
        assert!(StoreError::Lmdb("commit", libc::ENOSPC)
            .to_string()
            .contains("ENOSPC"));
    }
}
