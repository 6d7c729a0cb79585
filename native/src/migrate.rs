//! Store layout upgrades, run when a process opens the store (api::open). Each moves the
//! records of an older layout to the current one in one transaction, and is a no-op on a
//! current store, so every process may run them; they only read a legacy table to find
//! there is nothing to do.
//!
//! - Credits: formerly the `credits` table (key = keyId); now `ratelimit_windows` at
//!   `k/<keyId>` beside the key's own windows (credits.rs).
//! - Key records: formerly `keys` (keyId → record) with `key_hashes` (SHA-256 → keyId); now
//!   `key_records` (SHA-256 → record), which a verification reads in one lookup, with
//!   `keys` (keyId → SHA-256) for management (src/store/keys.ts).

use crate::credits;
use crate::store::{self, StoreError, Table};

/// Runs every upgrade; returns how many records moved.
pub fn run() -> Result<usize, StoreError> {
    Ok(credits_beside_windows()? + key_records_by_hash()?)
}

/// Every (key, value) of a table.
fn all(table: Table) -> Result<Vec<(Vec<u8>, Vec<u8>)>, StoreError> {
    store::view(|v| {
        let mut out = Vec::new();
        v.range(table, &[], None, usize::MAX, |k, value| {
            out.push((k.to_vec(), value.to_vec()));
            Ok::<_, StoreError>(())
        })?;
        Ok::<_, StoreError>(out)
    })
}

fn credits_beside_windows() -> Result<usize, StoreError> {
    let legacy = all(Table::CREDITS)?;
    if legacy.is_empty() {
        return Ok(0);
    }
    store::transaction(|| {
        for (key_id, value) in &legacy {
            // A record written at the new place since (by a newer process) wins.
            let place = credits::record_key(key_id);
            if store::get(credits::TABLE, &place, |v| v.is_none())? {
                store::put(credits::TABLE, &place, value)?;
            }
            store::del(Table::CREDITS, key_id)?;
        }
        Ok(legacy.len())
    })
}

fn key_records_by_hash() -> Result<usize, StoreError> {
    let legacy = all(Table::KEY_HASHES)?;
    if legacy.is_empty() {
        return Ok(0);
    }
    store::transaction(|| {
        for (hash, key_id) in &legacy {
            if let Some(record) = store::get(Table::KEYS, key_id, |v| v.map(<[u8]>::to_vec))? {
                // Written by this layout already: keys holds the 32-byte hash, not a record.
                if record != *hash {
                    store::put(Table::KEY_RECORDS, hash, &record)?;
                    store::put(Table::KEYS, key_id, hash)?;
                }
            }
            store::del(Table::KEY_HASHES, hash)?;
        }
        Ok(legacy.len())
    })
}
