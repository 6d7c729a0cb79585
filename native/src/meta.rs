//! Values of the meta table that the native side reads. src/store/records.ts names them and
//! management code writes them (src/store/db.ts putNumber: an 8-byte float64, little-endian).

use std::cell::Cell;

use crate::store::{self, StoreError, Table};

/// Bumped by every root-key create or revoke (src/store/rootKeys.ts), so serving threads
/// can drop the principals they cached.
pub const ROOT_KEYS_VERSION: &[u8] = b"root_keys_version";

thread_local! {
    /// (commit mark or records mark, version) of this thread's last read (the two marks
    /// name the same snapshot alike: generation, id of its last commit).
    static CACHED: Cell<Option<((u64, u64), f64)>> = const { Cell::new(None) };
}

fn read_number(key: &[u8]) -> Result<f64, StoreError> {
    store::get(Table::META, key, |v| v.and_then(|b| <[u8; 8]>::try_from(b).ok()).map_or(0.0, f64::from_le_bytes))
}

/// The root-key version (0 before the first root key). Asked on every request, so it is
/// read from the store only when what this thread reads has changed since it last read it:
/// outside a transaction, a transaction has committed since (`store::commit_mark`); inside
/// one (a turn's batch of hot calls), it began from another snapshot (`store::records_mark`).
/// A transaction that changed records (a root key's create or revoke is one) always reads
/// it, and does not keep it, since its own changes may still be rolled back.
pub fn root_keys_version() -> Result<f64, StoreError> {
    let mark = if store::in_transaction() { store::view(|v| Ok::<_, StoreError>(store::records_mark(v)))? } else { Some(store::commit_mark()?) };
    let Some(mark) = mark else { return read_number(ROOT_KEYS_VERSION) };
    if let Some((seen, version)) = CACHED.get() {
        if seen == mark {
            return Ok(version);
        }
    }
    let version = read_number(ROOT_KEYS_VERSION)?;
    CACHED.set(Some((mark, version)));
    Ok(version)
}
