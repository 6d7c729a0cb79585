//! The LMDB C API (lmdb-sys) behind safe handles: every raw LMDB call of the crate is in
//! this file. Failures are LMDB's return codes (or errno values); the store names the
//! operation that failed.
//!
//! What makes the calls sound:
//! - `Env` owns the environment, which is closed (mdb_env_close) when the last share of it
//!   drops. A `WriteTxn` holds a share and a `ReadTxn` borrows the `Env`, so no transaction
//!   outlives its environment.
//! - `WriteTxn` and `ReadTxn` own a live transaction; ending it (`commit`, `abort`, `reset`,
//!   or dropping, which aborts) consumes them. What is read through a transaction borrows
//!   it, and writes take `&mut WriteTxn`, so nothing read is still in use when the
//!   transaction writes or ends (LMDB: a value is valid "until the next update operation, or
//!   the end of the transaction").
//! - `Reader` is a reset read transaction kept for its thread's next read, with its cursors.
//!   It may outlive its environment (a thread keeps one while another closes the store), so
//!   `renew` and `discard` check that it belongs to the `Env` they are given (`Env::id`),
//!   and dropping one leaks it rather than touch an environment that may be closed.
//! - `Env::set_map_size` and `Env::set_flags` need "no active transaction in this process":
//!   they take `&mut Env` (no `ReadTxn` borrows it) and refuse with EBUSY while a `WriteTxn`
//!   shares it.
//! - A transaction keeps one cursor per table (`Dbi`'s slot), opened on first use. LMDB frees
//!   a write transaction's cursors with it; a read transaction's are kept with its `Reader`,
//!   renewed before their first use in its next transaction, and closed when it is discarded.
//! - Transactions are neither `Send` nor `Sync`: a write transaction holds LMDB's writer
//!   lock, a mutex owned by the thread that began it.

use std::cell::Cell;
use std::ffi::CStr;
use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::ops::Deref;
use std::os::fd::BorrowedFd;
use std::path::Path;
use std::ptr::{self, NonNull};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use libc::{c_int, c_uint, c_void};
use lmdb::{DatabaseFlags, Environment};
use lmdb_sys as sys;

pub use lmdb::EnvironmentFlags;
pub use sys::{MDB_BAD_TXN, MDB_MAP_FULL, MDB_MAP_RESIZED, MDB_NOMETASYNC, MDB_NOSYNC};

/// A key and its value, as read through a transaction borrowed for `'t`.
pub type Entry<'t> = (&'t [u8], &'t [u8]);

/// A failed LMDB call: its name and return code.
#[derive(Clone, Copy, Debug)]
pub struct Failed {
    pub op: &'static str,
    pub rc: c_int,
}

fn check(rc: c_int) -> Result<(), c_int> {
    if rc == 0 {
        Ok(())
    } else {
        Err(rc)
    }
}

/// LMDB's text for `rc`: its own codes', else the C library's (strerror).
pub fn strerror(rc: c_int) -> String {
    // SAFETY: mdb_strerror returns a NUL-terminated string, static or in a buffer of this
    // thread; it is copied before anything else could overwrite it.
    unsafe { CStr::from_ptr(sys::mdb_strerror(rc)) }.to_string_lossy().into_owned()
}

fn val(bytes: &[u8]) -> sys::MDB_val {
    sys::MDB_val { mv_size: bytes.len(), mv_data: bytes.as_ptr() as *mut c_void }
}

/// # Safety
/// `v` was filled by LMDB in a transaction that is neither written nor ended during `'a`.
unsafe fn slice<'a>(v: &sys::MDB_val) -> &'a [u8] {
    if v.mv_size == 0 {
        &[]
    } else {
        std::slice::from_raw_parts(v.mv_data as *const u8, v.mv_size)
    }
}

/// Ids of opened environments, so that a `Reader` knows the `Env` it was begun in.
static NEXT_ENV_ID: AtomicU64 = AtomicU64::new(1);

/// An open LMDB environment.
pub struct Env {
    env: Arc<Environment>,
    id: u64,
}

/// What mdb_env_info reports.
#[derive(Clone, Copy, Debug)]
pub struct EnvInfo {
    pub map_bytes: usize,
    pub last_pgno: usize,
    pub last_txn_id: usize,
}

/// A named table of an `Env`: LMDB's handle, and the slot under which transactions keep the
/// table's cursor (below the `N` of the transactions it is used in).
#[derive(Clone, Copy, Debug)]
pub struct Dbi {
    dbi: sys::MDB_dbi,
    slot: usize,
}

impl Env {
    /// mdb_env_open of the environment at `dir` (the lmdb crate's builder).
    pub fn open(dir: &Path, flags: EnvironmentFlags, map_bytes: usize, max_dbs: u32, max_readers: u32) -> Result<Env, c_int> {
        let env = Environment::new()
            .set_flags(flags)
            .set_max_dbs(max_dbs)
            .set_max_readers(max_readers)
            .set_map_size(map_bytes)
            .open(dir)
            .map_err(|e| e.to_err_code())?;
        Ok(Env { env: Arc::new(env), id: NEXT_ENV_ID.fetch_add(1, Ordering::Relaxed) })
    }

    fn raw(&self) -> *mut sys::MDB_env {
        self.env.env()
    }

    /// The environment when nothing else of this process uses it: no `ReadTxn` borrows it
    /// (`&mut self`) and no `WriteTxn` shares it.
    fn exclusive(&mut self) -> Result<*mut sys::MDB_env, c_int> {
        Arc::get_mut(&mut self.env).map(|env| env.env()).ok_or(libc::EBUSY)
    }

    /// Opens the named table, creating it if missing; `slot` is where transactions keep its
    /// cursor.
    pub fn create_table(&self, name: &str, slot: usize) -> Result<Dbi, c_int> {
        let db = self.env.create_db(Some(name), DatabaseFlags::empty()).map_err(|e| e.to_err_code())?;
        Ok(Dbi { dbi: db.dbi(), slot })
    }

    pub fn info(&self) -> EnvInfo {
        let mut info = sys::MDB_envinfo { me_mapaddr: ptr::null_mut(), me_mapsize: 0, me_last_pgno: 0, me_last_txnid: 0, me_maxreaders: 0, me_numreaders: 0 };
        // SAFETY: the env is open (owned); mdb_env_info only fills the struct (always 0).
        unsafe { sys::mdb_env_info(self.raw(), &mut info) };
        EnvInfo { map_bytes: info.me_mapsize, last_pgno: info.me_last_pgno, last_txn_id: info.me_last_txnid }
    }

    /// A compacted copy of the environment's data file into the empty directory `dir`, taken
    /// in a read transaction of its own (mdb_env_copy2 with MDB_CP_COMPACT): writers go on.
    pub fn copy_compact(&self, dir: &Path) -> Result<(), c_int> {
        use std::os::unix::ffi::OsStrExt;
        let path = std::ffi::CString::new(dir.as_os_str().as_bytes()).map_err(|_| libc::EINVAL)?;
        // SAFETY: the env is open (owned); the path is a NUL-terminated string that outlives the call.
        check(unsafe { sys::mdb_env_copy2(self.raw(), path.as_ptr(), sys::MDB_CP_COMPACT) })
    }

    /// The page size (mdb_env_stat).
    pub fn page_size(&self) -> Result<usize, c_int> {
        let mut st = sys::MDB_stat { ms_psize: 0, ms_depth: 0, ms_branch_pages: 0, ms_leaf_pages: 0, ms_overflow_pages: 0, ms_entries: 0 };
        // SAFETY: the env is open; mdb_env_stat only fills the struct.
        check(unsafe { sys::mdb_env_stat(self.raw(), &mut st) })?;
        Ok(st.ms_psize as usize)
    }

    /// mdb_env_sync(force = 1).
    pub fn sync(&self) -> Result<(), c_int> {
        // SAFETY: the env is open.
        check(unsafe { sys::mdb_env_sync(self.raw(), 1) })
    }

    /// mdb_env_set_flags: turns `flags` on or off. EBUSY while a transaction shares the env.
    pub fn set_flags(&mut self, flags: c_uint, on: bool) -> Result<(), c_int> {
        let env = self.exclusive()?;
        // SAFETY: the env is open and no other thread of this process uses it (`exclusive`),
        // so nothing reads the flags while they change.
        check(unsafe { sys::mdb_env_set_flags(env, flags, c_int::from(on)) })
    }

    #[cfg(test)]
    pub fn flags(&self) -> Result<c_uint, c_int> {
        let mut flags = 0;
        // SAFETY: the env is open; mdb_env_get_flags only fills `flags`.
        check(unsafe { sys::mdb_env_get_flags(self.raw(), &mut flags) })?;
        Ok(flags)
    }

    /// mdb_reader_check: clears the reader slots of processes that are gone; returns how
    /// many.
    pub fn check_readers(&self) -> Result<c_int, c_int> {
        let mut dead = 0;
        // SAFETY: the env is open; `dead` is an out-pointer.
        check(unsafe { sys::mdb_reader_check(self.raw(), &mut dead) })?;
        Ok(dead)
    }

    /// mdb_env_set_mapsize (0: adopt the size another process stored). EBUSY while a
    /// transaction of this process shares the env.
    pub fn set_map_size(&mut self, bytes: usize) -> Result<(), c_int> {
        let env = self.exclusive()?;
        // SAFETY: LMDB requires that no transaction of this process is active: none borrows
        // or shares this env (`exclusive`), and a `Reader` (reset) is not active.
        check(unsafe { sys::mdb_env_set_mapsize(env, bytes) })
    }

    /// The descriptor of the data file (LMDB's own).
    pub fn data_fd(&self) -> Result<BorrowedFd<'_>, c_int> {
        let mut fd: c_int = -1;
        // SAFETY: the env is open; mdb_env_get_fd only reads its descriptor.
        check(unsafe { sys::mdb_env_get_fd(self.raw(), &mut fd) })?;
        if fd < 0 {
            return Err(libc::EBADF);
        }
        // SAFETY: LMDB keeps the descriptor open until the env closes, which it cannot while
        // `self` (a share of it) is borrowed.
        Ok(unsafe { BorrowedFd::borrow_raw(fd) })
    }

    fn begin(&self, flags: c_uint) -> Result<NonNull<sys::MDB_txn>, c_int> {
        let mut txn = ptr::null_mut();
        // SAFETY: the env is open; a top-level txn (no parent). The caller puts the handle in
        // a `WriteTxn` or `ReadTxn`, which keep the env open while they live.
        check(unsafe { sys::mdb_txn_begin(self.raw(), ptr::null_mut(), flags, &mut txn) })?;
        NonNull::new(txn).ok_or(libc::EINVAL)
    }

    /// Begins a write transaction (waits for LMDB's writer lock).
    pub fn begin_write<const N: usize>(&self) -> Result<WriteTxn<N>, c_int> {
        let raw = self.begin(0)?;
        Ok(WriteTxn { txn: Txn::new(raw), end: AbortOnDrop(raw), _env: Arc::clone(&self.env) })
    }

    /// Begins a read-only transaction (a snapshot of now).
    pub fn begin_read<const N: usize>(&self) -> Result<ReadTxn<'_, N>, c_int> {
        Ok(ReadTxn { txn: Txn::new(self.begin(sys::MDB_RDONLY)?), env: self })
    }
}

/// A live transaction, reached through its owner (`WriteTxn`, `ReadTxn`), with the cursors
/// it keeps per table.
pub struct Txn<const N: usize> {
    raw: NonNull<sys::MDB_txn>,
    /// One cursor per table slot, null until first used.
    cursors: [Cell<*mut sys::MDB_cursor>; N],
    /// Bit per slot: its cursor belongs to this transaction (a cursor a `Reader` kept is
    /// renewed before its first use in a new one).
    bound: Cell<u32>,
}

impl<const N: usize> Txn<N> {
    fn new(raw: NonNull<sys::MDB_txn>) -> Txn<N> {
        const { assert!(N <= 32, "one bit of `bound` per slot") };
        Txn { raw, cursors: std::array::from_fn(|_| Cell::new(ptr::null_mut())), bound: Cell::new(0) }
    }

    /// The cursor of `dbi`'s slot in this transaction: opened, or (one a `Reader` kept)
    /// renewed.
    #[inline]
    fn cursor_of(&self, dbi: Dbi) -> Result<*mut sys::MDB_cursor, Failed> {
        let i = dbi.slot;
        let mut cursor = self.cursors[i].get();
        if self.bound.get() & (1 << i) != 0 {
            return Ok(cursor);
        }
        if cursor.is_null() {
            // SAFETY: the txn is live; LMDB refuses (EINVAL) a dbi that is not of its env. The
            // cursor is freed by LMDB with a write txn, or closed by `close_cursors` (read).
            check(unsafe { sys::mdb_cursor_open(self.raw.as_ptr(), dbi.dbi, &mut cursor) }).map_err(|rc| Failed { op: "mdb_cursor_open", rc })?;
        } else {
            // SAFETY: only a `Reader` keeps cursors from one txn to the next, so this is a
            // read cursor of this env (`Reader::renew` checked) and this txn a live read txn.
            check(unsafe { sys::mdb_cursor_renew(self.raw.as_ptr(), cursor) }).map_err(|rc| Failed { op: "mdb_cursor_renew", rc })?;
        }
        self.cursors[i].set(cursor);
        self.bound.set(self.bound.get() | (1 << i));
        Ok(cursor)
    }

    /// The table's cursor in this transaction (see `Cursor`).
    #[inline]
    pub fn cursor(&self, dbi: Dbi) -> Result<Cursor<'_>, Failed> {
        Ok(Cursor { raw: self.cursor_of(dbi)?, _txn: PhantomData })
    }

    /// mdb_txn_id: for a read transaction the id of the last write transaction committed
    /// when its snapshot was taken; for a write transaction the id it will commit as.
    pub fn id(&self) -> u64 {
        // SAFETY: the txn is live.
        unsafe { sys::mdb_txn_id(self.raw.as_ptr()) as u64 }
    }

    /// Entries of the table (mdb_stat).
    pub fn entries(&self, dbi: Dbi) -> Result<usize, c_int> {
        let mut st = sys::MDB_stat { ms_psize: 0, ms_depth: 0, ms_branch_pages: 0, ms_leaf_pages: 0, ms_overflow_pages: 0, ms_entries: 0 };
        // SAFETY: the txn is live; mdb_stat only fills the struct (EINVAL for a foreign dbi).
        check(unsafe { sys::mdb_stat(self.raw.as_ptr(), dbi.dbi, &mut st) })?;
        Ok(st.ms_entries)
    }

    /// A walk over the table in key order from the first key `>= start` (from its first key
    /// when `start` is empty), with a cursor of its own.
    pub fn walk<'k>(&self, dbi: Dbi, start: &'k [u8]) -> Result<Walk<'_, 'k>, c_int> {
        let mut cursor = ptr::null_mut();
        // SAFETY: the txn is live while the walk borrows it; the walk closes the cursor when
        // dropped, before that borrow ends.
        check(unsafe { sys::mdb_cursor_open(self.raw.as_ptr(), dbi.dbi, &mut cursor) })?;
        Ok(Walk { cursor, start: Some(start), _txn: PhantomData })
    }

    /// Closes the cursors kept in the slots.
    ///
    /// # Safety
    /// Only for a read transaction (a write transaction's cursors are LMDB's to free), whose
    /// environment is open; the slots are not used again.
    unsafe fn close_cursors(&self) {
        for slot in &self.cursors {
            let cursor = slot.replace(ptr::null_mut());
            if !cursor.is_null() {
                sys::mdb_cursor_close(cursor);
            }
        }
        self.bound.set(0);
    }
}

/// A table's cursor in a transaction borrowed for `'t` (which is neither written nor ended
/// meanwhile); what it reads lives as long.
#[derive(Clone, Copy)]
pub struct Cursor<'t> {
    raw: *mut sys::MDB_cursor,
    _txn: PhantomData<&'t ()>,
}

impl<'t> Cursor<'t> {
    fn op(self, key: &[u8], op: c_uint) -> Result<Option<Entry<'t>>, c_int> {
        let (mut k, mut v) = (val(key), val(&[]));
        // SAFETY: the cursor belongs to a txn borrowed for 't; LMDB fills k and v (for these
        // ops it only reads the bytes of `key`).
        match unsafe { sys::mdb_cursor_get(self.raw, &mut k, &mut v, op) } {
            // SAFETY: k and v point into the map or a page of the txn, valid while it is
            // neither written nor ended: for 't.
            0 => Ok(Some(unsafe { (slice(&k), slice(&v)) })),
            sys::MDB_NOTFOUND => Ok(None),
            rc => Err(rc),
        }
    }

    /// The value under `key` (MDB_SET); the cursor is left on it, or near it, so the next
    /// lookup of a key on the same leaf page does not descend from the root again.
    #[inline]
    pub fn get(self, key: &[u8]) -> Result<Option<&'t [u8]>, c_int> {
        Ok(self.op(key, sys::MDB_SET)?.map(|(_, v)| v))
    }

    /// The table's last key (MDB_LAST).
    pub fn last_key(self) -> Result<Option<&'t [u8]>, c_int> {
        Ok(self.op(&[], sys::MDB_LAST)?.map(|(k, _)| k))
    }

    /// The first key `>= key` (MDB_SET_RANGE).
    pub fn first_key_from(self, key: &[u8]) -> Result<Option<&'t [u8]>, c_int> {
        Ok(self.op(key, sys::MDB_SET_RANGE)?.map(|(k, _)| k))
    }
}

/// A table's cursor in a write transaction borrowed exclusively for `'t`: it may write, and
/// what it reads lives only until it does (as long as the borrow of the cursor).
pub struct CursorMut<'t> {
    raw: *mut sys::MDB_cursor,
    _txn: PhantomData<&'t mut ()>,
}

impl CursorMut<'_> {
    /// As `Cursor::get`.
    #[inline]
    pub fn get(&self, key: &[u8]) -> Result<Option<&[u8]>, c_int> {
        Cursor { raw: self.raw, _txn: PhantomData }.get(key)
    }

    fn put_with(&mut self, key: &[u8], value: &[u8], flags: c_uint) -> Result<(), c_int> {
        let (mut k, mut v) = (val(key), val(value));
        // SAFETY: the cursor belongs to a live write txn borrowed exclusively, so nothing read
        // through it is in use; LMDB copies the bytes of key and value.
        check(unsafe { sys::mdb_cursor_put(self.raw, &mut k, &mut v, flags) })
    }

    /// Inserts or replaces (mdb_cursor_put).
    #[inline]
    pub fn put(&mut self, key: &[u8], value: &[u8]) -> Result<(), c_int> {
        self.put_with(key, value, 0)
    }

    /// Appends `key`, which must sort after every key of the table (MDB_APPEND: no search).
    #[inline]
    pub fn append(&mut self, key: &[u8], value: &[u8]) -> Result<(), c_int> {
        self.put_with(key, value, sys::MDB_APPEND)
    }

    /// Deletes the entry the cursor is on (after `get` found it; LMDB refuses otherwise).
    pub fn del_current(&mut self) -> Result<(), c_int> {
        // SAFETY: as in `put_with`.
        check(unsafe { sys::mdb_cursor_del(self.raw, 0) })
    }
}

/// See `Txn::walk`. The walk's cursor is closed when it is dropped.
pub struct Walk<'t, 'k> {
    cursor: *mut sys::MDB_cursor,
    /// The start key until the first step.
    start: Option<&'k [u8]>,
    _txn: PhantomData<&'t ()>,
}

impl<'t> Walk<'t, '_> {
    /// The next entry (key, value), or None past the last.
    pub fn next_entry(&mut self) -> Result<Option<Entry<'t>>, c_int> {
        let (key, op) = match self.start.take() {
            Some(start) if !start.is_empty() => (start, sys::MDB_SET_RANGE),
            Some(_) => (&[][..], sys::MDB_FIRST),
            None => (&[][..], sys::MDB_NEXT),
        };
        Cursor { raw: self.cursor, _txn: PhantomData }.op(key, op)
    }
}

impl Drop for Walk<'_, '_> {
    fn drop(&mut self) {
        // SAFETY: the cursor is live and its txn outlives the walk ('t).
        unsafe { sys::mdb_cursor_close(self.cursor) }
    }
}

/// A write transaction. Dropped without `commit`, it is aborted.
pub struct WriteTxn<const N: usize> {
    txn: Txn<N>,
    end: AbortOnDrop,
    /// Keeps the env open until the txn has ended (dropped after `end`).
    _env: Arc<Environment>,
}

struct AbortOnDrop(NonNull<sys::MDB_txn>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        // SAFETY: the write txn is live (`commit` forgets this guard before it ends the txn)
        // and its env open (the share beside it is dropped after it); its cursors go with it.
        unsafe { sys::mdb_txn_abort(self.0.as_ptr()) }
    }
}

impl<const N: usize> WriteTxn<N> {
    /// The table's cursor, to write through (see `CursorMut`).
    #[inline]
    pub fn cursor_mut(&mut self, dbi: Dbi) -> Result<CursorMut<'_>, Failed> {
        Ok(CursorMut { raw: self.txn.cursor_of(dbi)?, _txn: PhantomData })
    }

    /// mdb_txn_commit; the transaction ends whether or not it succeeds.
    pub fn commit(self) -> Result<(), c_int> {
        let WriteTxn { txn, end, _env } = self;
        std::mem::forget(end);
        // SAFETY: the txn is live and ends here (LMDB frees it, and its cursors, on success
        // and failure alike); `_env` keeps its env open until after.
        check(unsafe { sys::mdb_txn_commit(txn.raw.as_ptr()) })
    }

    /// mdb_txn_abort.
    pub fn abort(self) {
        drop(self);
    }

    /// Begins a transaction nested in this one (mdb_txn_begin with this as parent): until it
    /// ends, this transaction must not be used; its commit merges its writes into this one,
    /// its abort discards them. LMDB refuses it (MDB_BAD_TXN) under MDB_WRITEMAP.
    pub fn begin_child(&mut self) -> Result<WriteTxn<N>, c_int> {
        let mut raw = ptr::null_mut();
        // SAFETY: this write txn is live and, borrowed mutably while the caller holds the
        // child apart from it, unused until the child ends (the caller's contract above); the
        // child's env is this one's, kept open by the share cloned below.
        check(unsafe { sys::mdb_txn_begin(self._env.env(), self.txn.raw.as_ptr(), 0, &mut raw) })?;
        let raw = NonNull::new(raw).ok_or(libc::EINVAL)?;
        Ok(WriteTxn { txn: Txn::new(raw), end: AbortOnDrop(raw), _env: Arc::clone(&self._env) })
    }
}

impl<const N: usize> Deref for WriteTxn<N> {
    type Target = Txn<N>;

    #[inline]
    fn deref(&self) -> &Txn<N> {
        &self.txn
    }
}

/// A read-only transaction of the `Env` it borrows. Dropped, it is aborted and its cursors
/// closed; `reset` keeps both for the next read (`Reader`).
pub struct ReadTxn<'e, const N: usize> {
    txn: Txn<N>,
    env: &'e Env,
}

impl<const N: usize> ReadTxn<'_, N> {
    /// mdb_txn_reset: ends the snapshot and keeps the transaction and its cursors for reuse.
    pub fn reset(self) -> Reader<N> {
        let this = ManuallyDrop::new(self);
        // SAFETY: the txn is live and read-only; from here it is only renewed or aborted
        // (`Reader`), since `this` is never dropped.
        unsafe { sys::mdb_txn_reset(this.txn.raw.as_ptr()) };
        let cursors = std::array::from_fn(|i| Cell::new(this.txn.cursors[i].get()));
        Reader { txn: Txn { raw: this.txn.raw, cursors, bound: Cell::new(0) }, env_id: this.env.id }
    }
}

impl<const N: usize> Drop for ReadTxn<'_, N> {
    fn drop(&mut self) {
        // SAFETY: a live read txn of an env that is open ('e); its cursors are read cursors,
        // closed before the txn is freed, and neither is used again.
        unsafe {
            self.txn.close_cursors();
            sys::mdb_txn_abort(self.txn.raw.as_ptr());
        }
    }
}

impl<const N: usize> Deref for ReadTxn<'_, N> {
    type Target = Txn<N>;

    #[inline]
    fn deref(&self) -> &Txn<N> {
        &self.txn
    }
}

/// A reset read transaction with its cursors, kept for its thread's next read: renewing it
/// costs much less than beginning one (no search of the reader table). Dropping it leaks it
/// (see the module comment).
pub struct Reader<const N: usize> {
    txn: Txn<N>,
    env_id: u64,
}

impl<const N: usize> Reader<N> {
    /// mdb_txn_renew: a read transaction again, on a snapshot of now; its cursors are renewed
    /// when first used. On failure it is given back with the code (EINVAL: it is not of `env`).
    pub fn renew(self, env: &Env) -> Result<ReadTxn<'_, N>, (Reader<N>, c_int)> {
        if self.env_id != env.id {
            return Err((self, libc::EINVAL));
        }
        // SAFETY: a reset read txn of `env`, which is open (borrowed).
        match unsafe { sys::mdb_txn_renew(self.txn.raw.as_ptr()) } {
            0 => {
                self.txn.bound.set(0);
                Ok(ReadTxn { txn: self.txn, env })
            }
            rc => Err((self, rc)),
        }
    }

    /// Ends it for good with its cursors, when it is `env`'s; another env's (which may be
    /// closed) is leaked.
    pub fn discard(self, env: &Env) {
        if self.env_id == env.id {
            // SAFETY: a reset (not active) read txn of `env`, which is open; its cursors are
            // read cursors, closed before the txn is freed, and neither is used again.
            unsafe {
                self.txn.close_cursors();
                sys::mdb_txn_abort(self.txn.raw.as_ptr());
            }
        }
    }
}
