//! What the store's calls fail with.

use std::fmt;

use libc::c_int;

use crate::ffi::lmdb::{self, Failed};

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

impl From<Failed> for StoreError {
    fn from(failed: Failed) -> StoreError {
        StoreError::Lmdb(failed.op, failed.rc)
    }
}

/// For `map_err`: a failure of the LMDB call named `op`.
pub(super) fn lmdb_failed(op: &'static str) -> impl Fn(c_int) -> StoreError {
    move |rc| StoreError::Lmdb(op, rc)
}

/// "MDB_MAP_FULL: Environment mapsize limit reached", "ENOSPC: No space left on device", …
pub fn lmdb_error_name(rc: c_int) -> String {
    let text = lmdb::strerror(rc);
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
        _ => return text,
    };
    format!("{errno}: {text} (code {rc})")
}

pub type Result<T, E = StoreError> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_messages_name_the_lmdb_error() {
        assert!(StoreError::Lmdb("put", lmdb::MDB_MAP_FULL)
            .to_string()
            .contains("MDB_MAP_FULL"));
        assert!(StoreError::Lmdb("commit", libc::ENOSPC)
            .to_string()
            .contains("ENOSPC"));
    }
}
