//! The ids the analytics databases store their dims under (src/analytics/database.ts,
//! schema.ts): for each open database, per table, the id of each dim (its fields as
//! event_rows.rs reads them), so that a row's dim column is written as that id and DuckDB
//! stores it as it comes. Looking the id up in DuckDB, per row, cost more than storing the
//! dim's texts in every row did (bench/HISTORY.md, 2026-11-30).
//!
//! A dim not known yet takes the table's next id while a batch is read; the database stores
//! the batch's new dims with its rows, and `forget`s them when that transaction fails, so
//! that the next batch numbers them again (with new ids: an id is never given twice).

use std::collections::HashMap;
use std::sync::Mutex;

/// One table's dims of one database.
#[derive(Debug, Default, PartialEq)]
pub struct Known {
    /// Each dim's id, by its key (`push_field`).
    ids: HashMap<Vec<u8>, u32>,
    next: u32,
    /// `next` when the last batch began: the ids it numbered are those from here to `next`.
    batch_start: u32,
}

impl Known {
    pub fn starting_at(next: u32) -> Self {
        Known { next, batch_start: next, ..Known::default() }
    }

    /// The id of `key`, and whether it was numbered here.
    pub fn id(&mut self, key: &[u8]) -> (u32, bool) {
        if let Some(&id) = self.ids.get(key) {
            return (id, false);
        }
        let id = self.next;
        self.next += 1;
        self.ids.insert(key.to_vec(), id);
        (id, true)
    }

    /// A batch starts: the dims it numbers are the ones `forget` drops.
    pub fn start_batch(&mut self) {
        self.batch_start = self.next;
    }

    fn forget(&mut self) {
        let numbered = self.batch_start..self.next;
        self.ids.retain(|_, id| !numbered.contains(id));
    }
}

/// Appends a field to a dim's key: its length (4 bytes, little-endian), then its bytes.
pub fn push_field(key: &mut Vec<u8>, field: &[u8]) {
    key.extend_from_slice(&(field.len() as u32).to_le_bytes());
    key.extend_from_slice(field);
}

/// The fields at the start of `key` (`push_field`'s), up to where one does not read.
pub fn fields(mut key: &[u8]) -> impl Iterator<Item = &[u8]> {
    std::iter::from_fn(move || {
        let (len, after) = key.split_first_chunk::<4>()?;
        let field = after.get(..u32::from_le_bytes(*len) as usize)?;
        key = &after[field.len()..];
        Some(field)
    })
}

/// The open databases' dims: [verifications, rate limits] by handle (a process opens one
/// database; tests and benchmarks a few).
struct Open {
    next_handle: u32,
    dims: Vec<(u32, [Known; 2])>,
}

impl Open {
    fn get(&mut self, handle: u32) -> Option<&mut [Known; 2]> {
        self.dims.iter_mut().find(|(h, _)| *h == handle).map(|(_, d)| d)
    }
}

static OPEN: Mutex<Open> = Mutex::new(Open { next_handle: 1, dims: Vec::new() });

fn open_dims() -> std::sync::MutexGuard<'static, Open> {
    OPEN.lock().unwrap_or_else(|p| p.into_inner())
}

/// A handle for a database whose tables' next ids are `next`, with no dims known yet.
pub fn open(next: [u32; 2]) -> u32 {
    let mut o = open_dims();
    let handle = o.next_handle;
    o.next_handle += 1;
    o.dims.push((handle, next.map(Known::starting_at)));
    handle
}

pub fn close(handle: u32) {
    open_dims().dims.retain(|(h, _)| *h != handle);
}

/// Dims a database has stored, read as `records`: per dim its id (4 bytes, little-endian),
/// then `fields` fields as `push_field` writes them. False for a handle not open or records
/// that do not read so.
pub fn learn(handle: u32, table: usize, fields: usize, mut records: &[u8]) -> bool {
    let mut o = open_dims();
    let Some(known) = o.get(handle).and_then(|d| d.get_mut(table)) else { return false };
    while !records.is_empty() {
        let Some((id, rest)) = records.split_first_chunk::<4>() else { return false };
        let read: Vec<usize> = self::fields(rest).take(fields).map(|f| 4 + f.len()).collect();
        if read.len() < fields {
            return false;
        }
        let (key, after) = rest.split_at(read.iter().sum());
        known.ids.insert(key.to_vec(), u32::from_le_bytes(*id));
        records = after;
    }
    true
}

/// Drops the dims the last batch read numbered (its transaction failed).
pub fn forget(handle: u32) {
    if let Some(dims) = open_dims().get(handle) {
        dims.iter_mut().for_each(Known::forget);
    }
}

/// Runs `read` with the database's dims (none: `handle` is not open).
pub fn with<R>(handle: u32, read: impl FnOnce(&mut [Known; 2]) -> R) -> Option<R> {
    open_dims().get(handle).map(read)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(fields: &[&str]) -> Vec<u8> {
        let mut key = Vec::new();
        fields.iter().for_each(|f| push_field(&mut key, f.as_bytes()));
        key
    }

    #[test]
    fn a_database_numbers_new_dims_after_the_ids_it_stored_and_forgets_a_failed_batchs() {
        let handle = open([5, 0]);
        let stored = [&7u32.to_le_bytes()[..], &key(&["w", "a", "VALID"])].concat();
        assert!(learn(handle, 0, 3, &stored));
        assert!(!learn(handle, 0, 3, &stored[..stored.len() - 1]), "a record cut short");
        let ids = with(handle, |d| {
            d[0].start_batch();
            [d[0].id(&key(&["w", "a", "VALID"])), d[0].id(&key(&["w", "b", "VALID"])), d[0].id(&key(&["w", "b", "VALID"])), d[1].id(&key(&["w", "n", "n", ""]))]
        });
        assert_eq!(ids, Some([(7, false), (5, true), (5, false), (0, true)]));
        forget(handle);
        let again = with(handle, |d| [d[0].id(&key(&["w", "a", "VALID"])), d[0].id(&key(&["w", "b", "VALID"]))]);
        assert_eq!(again, Some([(7, false), (6, true)]), "a forgotten dim is numbered again, with a new id");
        close(handle);
        assert_eq!(with(handle, |_| ()), None);
        assert!(!learn(handle, 0, 3, &stored));
    }
}
