//! The commit hook: what another module does at the ends of every write transaction, so the
//! store runs it without knowing that module (the counter log, crate::counterlog, registers
//! one).
//!
//! Contract: one hook per process, registered with `set_commit_hook` before the first
//! transaction whose end it must see (the store calls it at the end of every write
//! transaction from then on). Its functions run on the transaction's thread, once per
//! transaction end, through a function pointer:
//! - `before_commit`, when the body succeeded, with the transaction still open (it may read
//!   and write through it); an error aborts the transaction instead of committing it;
//! - `commit`, around the commit itself: it calls `commit` (mdb_txn_commit) once and returns
//!   what it returned (`Err`: LMDB's code), so that it can hold a lock of its own across the
//!   commit and act on its outcome;
//! - `aborted`, when the transaction ends without a commit (the body failed or panicked, a
//!   write hit MAP_FULL and the body is re-run, a batch was discarded);
//! - `savepoint`, when a transaction nested in the open batch begins (write_txn.rs
//!   `transaction`), and then `release` when it is merged into the batch or `rollback` when
//!   it is discarded: the hook's state of the batch goes back to what it was at `savepoint`
//!   (or, when the hook was registered during the nested transaction, to what it is between
//!   transactions). One level: a nested transaction never nests another.
//!
//! A thread that exits with its transaction open (a worker that ends with its batch open)
//! has it aborted when its thread-locals are destroyed, without the hook.

use std::sync::OnceLock;

use libc::c_int;

use crate::ffi::lmdb;

use super::env::WriteTxn;
use super::error::Result;

/// What a commit returns: `Err` is LMDB's code.
pub type Committed = std::result::Result<(), c_int>;

pub struct CommitHook {
    pub before_commit: fn() -> Result<()>,
    pub commit: fn(commit: &mut dyn FnMut() -> Committed) -> Committed,
    pub aborted: fn(),
    pub savepoint: fn(),
    pub release: fn(),
    pub rollback: fn(),
}

static HOOK: OnceLock<&'static CommitHook> = OnceLock::new();

/// Registers `hook`. Registering it again is a no-op; another hook after it is a bug.
pub fn set_commit_hook(hook: &'static CommitHook) {
    let set = HOOK.get_or_init(|| hook);
    assert!(std::ptr::eq(*set, hook), "the store takes one commit hook");
}

pub(super) fn before_commit() -> Result<()> {
    match HOOK.get() {
        Some(hook) => (hook.before_commit)(),
        None => Ok(()),
    }
}

/// Commits `txn` through the hook.
pub(super) fn commit(txn: WriteTxn) -> Committed {
    let Some(hook) = HOOK.get() else { return txn.commit() };
    // A hook that did not call `commit` would leave the txn here, aborted when dropped.
    let mut txn = Some(txn);
    (hook.commit)(&mut || txn.take().map_or(Err(lmdb::MDB_BAD_TXN), WriteTxn::commit))
}

/// Calls the hook's function `pick` chooses, when a hook is registered.
fn notify(pick: fn(&CommitHook) -> fn()) {
    if let Some(hook) = HOOK.get() {
        pick(hook)();
    }
}

pub(super) fn aborted() {
    notify(|h| h.aborted);
}

pub(super) fn savepoint() {
    notify(|h| h.savepoint);
}

pub(super) fn release() {
    notify(|h| h.release);
}

pub(super) fn rollback() {
    notify(|h| h.rollback);
}
