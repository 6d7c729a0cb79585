//! Store layout upgrades, run when a process opens the store (api::open). Each moves the
//! records of an older layout to the current one in one transaction, and is a no-op on a
//! current store, so every process may run them; they only read a legacy table to find
//! there is nothing to do.
//!
//! - Key records: formerly `keys` (keyId → record) with `key_hashes` (SHA-256 → keyId); now
//!   `key_records` (SHA-256 → record), which a verification reads in one lookup, with
//!   `keys` (keyId → SHA-256) for management (src/store/keys.ts).
//! - Counters (credits and rate-limit windows): now in the `counter_log` under their names
//!   (counterlog/). Before, credits were in the `credits` table (key = keyId), then in
//!   `ratelimit_windows` at `k/<keyId>`; key and identity windows in `ratelimit_windows` at
//!   `k/<keyId>/<name>` and `i/<identityId>/<name>`; limiter windows in `ratelimit_windows`
//!   at `n/<namespaceId>/<durationMs>/<sid>`, then under their 16-byte name.
//! - Sids (limit.rs storage_id): a namespace name or override identifier of at most 440
//!   bytes that starts with `#` was stored as it is; now by its digest. The records keyed by
//!   it (ratelimit_namespaces `<workspaceId>/<sid>`, ratelimit_overrides
//!   `<namespaceId>/<e|w>/<sid>`) move to the new key, with their entries in `indexes`
//!   (`ns_id/<namespaceId>`, `ns_ovr/<namespaceId>/<overrideId>`, whose values are those
//!   keys). Done once per store, then marked in `meta` (`SIDS_HASHED`): unlike the others it
//!   has to read every namespace and override to find its records. Windows are counters named
//!   by a digest of the sid and cannot be moved: the window of such an identifier starts
//!   over once.

use crate::credits;
use crate::limit;
use crate::counterlog::{self, Key};
use crate::records;
use crate::store::{self, StoreError, Table};
use crate::window::RECORD_BYTES;

/// Runs every upgrade; returns how many records moved.
pub fn run() -> Result<usize, StoreError> {
    Ok(key_records_by_hash()? + counters_to_the_log()? + hashed_sids()?)
}

/// The `meta` entry marking a store whose sids are all current (see the module).
const SIDS_HASHED: &[u8] = b"sids_hashed";

fn hashed_sids() -> Result<usize, StoreError> {
    if store::get(Table::META, SIDS_HASHED, |v| v.is_some())? {
        return Ok(0);
    }
    let namespaces = all(Table::RATELIMIT_NAMESPACES)?;
    let overrides = all(Table::RATELIMIT_OVERRIDES)?;
    // A record that cannot be decoded stays where it is (and answers as it did).
    store::transaction(|| {
        let mut moved = 0;
        for (key, value) in &namespaces {
            let Ok((id, name)) = records::namespace(value) else { continue };
            if let Some(new_key) = current_key(key, name) {
                move_record(Table::RATELIMIT_NAMESPACES, key, &new_key, value, &[b"ns_id/", id])?;
                moved += 1;
            }
        }
        for (key, value) in &overrides {
            let Ok(o) = records::override_record(value) else { continue };
            // The key starts with the namespace id, which has no '/'.
            let namespace_id = key.split(|&b| b == b'/').next().unwrap_or_default();
            if let Some(new_key) = current_key(key, o.identifier) {
                move_record(Table::RATELIMIT_OVERRIDES, key, &new_key, value, &[b"ns_ovr/", namespace_id, b"/", o.id])?;
                moved += 1;
            }
        }
        store::put(Table::META, SIDS_HASHED, b"1")?;
        Ok(moved)
    })
}

/// The key a record stored at `key` (`<prefix><sid>`) under `name` has now, when that differs:
/// a plain sid of a name that is now stored by its digest.
fn current_key(key: &[u8], name: &[u8]) -> Option<Vec<u8>> {
    let name = std::str::from_utf8(name).ok()?;
    let prefix = key.strip_suffix(name.as_bytes())?;
    let sid = limit::storage_id(name);
    (sid != name).then(|| [prefix, sid.as_bytes()].concat())
}

/// Moves a record to `new_key` and points its `indexes` entry (key: the concatenation of
/// `index`) there.
fn move_record(table: Table, key: &[u8], new_key: &[u8], value: &[u8], index: &[&[u8]]) -> Result<(), StoreError> {
    store::put(table, new_key, value)?;
    store::del(table, key)?;
    store::put(Table::INDEXES, &index.concat(), new_key)
}

/// The counter name of a record of `ratelimit_windows` in an older layout (see the module).
fn counter_name(old: &[u8]) -> Option<Key> {
    if let Some(rest) = old.strip_prefix(b"n/") {
        // n/<namespaceId>/<durationMs>/<sid>: ids and durations have no '/', sids may.
        let mut parts = rest.splitn(3, |&b| b == b'/');
        return match (parts.next(), parts.next(), parts.next()) {
            (Some(ns), Some(duration), Some(sid)) => Some(limit::window_key(ns, duration, sid)),
            _ => None,
        };
    }
    if old.len() == 16 && old[0] == counterlog::LIMITER_WINDOW {
        return old.try_into().ok();
    }
    match old.strip_prefix(b"k/") {
        Some(key_id) if !key_id.contains(&b'/') => Some(credits::record_key(key_id)),
        _ if old.starts_with(b"k/") || old.starts_with(b"i/") => Some(counterlog::named(counterlog::KEY_WINDOW, &[old])),
        _ => None,
    }
}

fn counters_to_the_log() -> Result<usize, StoreError> {
    let credits = all(Table::CREDITS)?;
    let windows = all(Table::RATELIMIT_WINDOWS)?;
    if credits.is_empty() && windows.is_empty() {
        return Ok(0);
    }
    store::transaction(|| {
        let named = credits
            .iter()
            .map(|(key_id, value)| (Table::CREDITS, key_id, Some(credits::record_key(key_id)), value))
            .chain(windows.iter().map(|(old, value)| (Table::RATELIMIT_WINDOWS, old, counter_name(old), value)));
        for (table, old, name, value) in named {
            let record = <&[u8; RECORD_BYTES]>::try_from(value.as_slice()).ok();
            if let (Some(name), Some(record)) = (name, record) {
                // A counter written under its name since (by a newer process) wins.
                if store::view(|v| counterlog::get(v, &name))?.is_none() {
                    counterlog::put(&name, record)?;
                }
            }
            store::del(table, old)?;
        }
        Ok(credits.len() + windows.len())
    })
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
