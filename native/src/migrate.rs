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
//! - Limiter windows: formerly at `n/<namespaceId>/<durationMs>/<sid>`, then under a 16-byte
//!   digest of the same parts (limit.rs window_key) in `ratelimit_windows`; now in the
//!   `ratelimit_log` under that digest (windowlog.rs).

use crate::credits;
use crate::limit;
use crate::store::{self, StoreError, Table};
use crate::window::RECORD_BYTES;
use crate::windowlog;

/// Runs every upgrade; returns how many records moved.
pub fn run() -> Result<usize, StoreError> {
    Ok(credits_beside_windows()? + key_records_by_hash()? + limiter_windows_by_digest()?)
}

fn limiter_windows_by_digest() -> Result<usize, StoreError> {
    let legacy = all_in(Table::RATELIMIT_WINDOWS, b"n/", b"n0")?;
    let in_table = all_in(Table::RATELIMIT_WINDOWS, &[limit::WINDOW_TAG], &[limit::WINDOW_TAG + 1])?;
    if legacy.is_empty() && in_table.is_empty() {
        return Ok(0);
    }
    store::transaction(|| {
        for (old, value) in legacy.iter().chain(&in_table) {
            // n/<namespaceId>/<durationMs>/<sid>: ids and durations have no '/', sids may.
            let place = match old.strip_prefix(b"n/") {
                Some(rest) => {
                    let mut parts = rest.splitn(3, |&b| b == b'/');
                    match (parts.next(), parts.next(), parts.next()) {
                        (Some(ns), Some(duration), Some(sid)) => Some(limit::window_key(ns, duration, sid)),
                        _ => None,
                    }
                }
                None => old.as_slice().try_into().ok(),
            };
            let record = <&[u8; RECORD_BYTES]>::try_from(value.as_slice()).ok();
            if let (Some(place), Some(record)) = (place, record) {
                // A window written at the new place since (by a newer process) wins.
                if store::view(|v| windowlog::get(v, &place))?.is_none() {
                    windowlog::put(&place, record)?;
                }
            }
            store::del(Table::RATELIMIT_WINDOWS, old)?;
        }
        Ok(legacy.len() + in_table.len())
    })
}

/// Every (key, value) of a table.
fn all(table: Table) -> Result<Vec<(Vec<u8>, Vec<u8>)>, StoreError> {
    all_in(table, &[], &[])
}

/// Every (key, value) of a table with `start <= key < end` (empty end: to the last).
fn all_in(table: Table, start: &[u8], end: &[u8]) -> Result<Vec<(Vec<u8>, Vec<u8>)>, StoreError> {
    store::view(|v| {
        let mut out = Vec::new();
        v.range(table, start, (!end.is_empty()).then_some(end), usize::MAX, |k, value| {
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
