//! Dry runs: a write transaction whose body runs as `transaction`'s does (its reads see its
//! own writes, the map grows and the body re-runs as there), but which is never committed:
//! its record writes (`put`, `del`) are collected instead, each key once, with the value it
//! had before the transaction and the value it was left with. Cluster mode commits them to
//! PostgreSQL first and applies them here from the cluster's change log afterwards.
//!
//! Writes other modules make that are not records (a key's credits, through the counter
//! log) are noted by their owners with `note` under a table id of their own.
//!
//! The records the body read and did not write (through JS's `get` and `getInto`:
//! `note_read`) are collected too, each with the value it had: PostgreSQL checks them as it
//! checks the written keys' values before (a key created in an API another node has deleted
//! meanwhile read the API as it was).

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};

use super::error::{Result, StoreError};
use super::table::Table;
use super::view::get;
use super::write_txn::{abort_taken, run_body};

/// One key a dry run wrote: its table id, the value before the transaction (None: absent)
/// and the value it was left with (None: deleted).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    pub table: u8,
    pub key: Vec<u8>,
    pub before: Option<Vec<u8>>,
    pub after: Option<Vec<u8>>,
}

/// One record a dry run read and did not write: its table id and the value it had (None:
/// absent).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Read {
    pub table: u8,
    pub key: Vec<u8>,
    pub value: Option<Vec<u8>>,
}

#[derive(Default)]
struct Collected {
    items: Vec<Written>,
    index: HashMap<(u8, Vec<u8>), usize>,
    reads: Vec<Read>,
    read: HashSet<(u8, Vec<u8>)>,
}

thread_local! {
    /// Some while a dry run's body runs on this thread.
    static COLLECTED: RefCell<Option<Collected>> = const { RefCell::new(None) };
}

/// Notes that `key` of `table` is left with `after`; `before` is asked for only the first
/// time the key is written in this dry run. Nothing outside a dry run.
pub fn note(table: u8, key: &[u8], before: impl FnOnce() -> Result<Option<Vec<u8>>>, after: Option<&[u8]>) -> Result<()> {
    let known = COLLECTED.with(|c| c.borrow().as_ref().map(|c| c.index.get(&(table, key.to_vec())).copied()));
    let Some(known) = known else { return Ok(()) };
    let before = match known {
        Some(_) => None,
        None => Some(before()?),
    };
    COLLECTED.with(|c| {
        let mut c = c.borrow_mut();
        let c = c.as_mut().expect("inside a dry run");
        match known {
            Some(i) => c.items[i].after = after.map(<[u8]>::to_vec),
            None => {
                c.index.insert((table, key.to_vec()), c.items.len());
                c.items.push(Written { table, key: key.to_vec(), before: before.flatten(), after: after.map(<[u8]>::to_vec) });
            }
        }
    });
    Ok(())
}

/// Notes that the body read `key` of `table` as `value`: the first read of a key, unless the
/// body wrote it before. Nothing outside a dry run.
pub fn note_read(table: Table, key: &[u8], value: Option<&[u8]>) {
    COLLECTED.with(|c| {
        let mut c = c.borrow_mut();
        let Some(c) = c.as_mut() else { return };
        let id = (table.id(), key.to_vec());
        if c.index.contains_key(&id) || c.read.contains(&id) {
            return;
        }
        c.read.insert(id);
        c.reads.push(Read { table: table.id(), key: key.to_vec(), value: value.map(<[u8]>::to_vec) });
    });
}

/// A record write of `put`/`del` (before it is made).
pub(super) fn note_record(table: Table, key: &[u8], after: Option<&[u8]>) -> Result<()> {
    note(table.id(), key, || get(table, key, |v| v.map(<[u8]>::to_vec)), after)
}

/// Runs `body` as `transaction` runs it, then aborts: the body's result, what it wrote (keys
/// whose value did not change are left out) and what it read of the keys it did not write.
pub fn dry_run<T, E: From<StoreError>>(mut body: impl FnMut() -> Result<T, E>) -> Result<(T, Vec<Written>, Vec<Read>), E> {
    loop {
        COLLECTED.with(|c| *c.borrow_mut() = Some(Collected::default()));
        let outcome = run_body(&mut body);
        let collected = COLLECTED.with(|c| c.borrow_mut().take()).unwrap_or_default();
        match outcome? {
            // The map grew: the body runs again from scratch.
            None => continue,
            Some((value, active)) => {
                abort_taken(active);
                let reads = collected.reads.into_iter().filter(|r| !collected.index.contains_key(&(r.table, r.key.clone()))).collect();
                let written = collected.items.into_iter().filter(|w| w.before != w.after).collect();
                return Ok((value, written, reads));
            }
        }
    }
}

/// The byte that ends the written keys and starts the read ones in `encode` (no table id).
pub const READS: u8 = 0xFF;

/// `written` and `reads` as bytes: per key written, u8 table, u32 LE key length, the key, then
/// before and after, each an i32 LE length (−1: none) and the bytes; then, when anything was
/// read, READS and per key read, its table, key and value laid out alike.
pub fn encode(written: &[Written], reads: &[Read]) -> Vec<u8> {
    let mut out = Vec::new();
    let value = |out: &mut Vec<u8>, value: &Option<Vec<u8>>| match value {
        Some(v) => {
            out.extend_from_slice(&(v.len() as i32).to_le_bytes());
            out.extend_from_slice(v);
        }
        None => out.extend_from_slice(&(-1i32).to_le_bytes()),
    };
    let key = |out: &mut Vec<u8>, table: u8, key: &[u8]| {
        out.push(table);
        out.extend_from_slice(&(key.len() as u32).to_le_bytes());
        out.extend_from_slice(key);
    };
    for w in written {
        key(&mut out, w.table, &w.key);
        value(&mut out, &w.before);
        value(&mut out, &w.after);
    }
    if !reads.is_empty() {
        out.push(READS);
        for r in reads {
            key(&mut out, r.table, &r.key);
            value(&mut out, &r.value);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::tests::{t, Fixture};
    use crate::store::write::{del, put};
    use crate::store::write_txn::transaction;

    #[test]
    fn collects_each_key_once_with_its_first_before_and_last_after_and_commits_nothing() {
        let _f = Fixture::new("dry_run", 0);
        transaction(|| {
            put(t("apis"), b"a", b"1")?;
            put(t("apis"), b"b", b"2")
        })
        .unwrap();
        let (value, written, _) = dry_run(|| {
            put(t("apis"), b"a", b"10")?;
            put(t("apis"), b"a", b"11")?;
            del(t("apis"), b"b")?;
            put(t("apis"), b"c", b"3")?;
            put(t("apis"), b"d", b"4")?;
            del(t("apis"), b"d")?;
            // Reads see the dry run's own writes.
            Ok::<_, StoreError>(get(t("apis"), b"a", |v| v.map(<[u8]>::to_vec))?)
        })
        .unwrap();
        assert_eq!(value, Some(b"11".to_vec()));
        let apis = t("apis").id();
        assert_eq!(
            written,
            vec![
                Written { table: apis, key: b"a".to_vec(), before: Some(b"1".to_vec()), after: Some(b"11".to_vec()) },
                Written { table: apis, key: b"b".to_vec(), before: Some(b"2".to_vec()), after: None },
                Written { table: apis, key: b"c".to_vec(), before: None, after: Some(b"3".to_vec()) },
            ]
        );
        // Nothing was committed.
        assert_eq!(get(t("apis"), b"a", |v| v.map(<[u8]>::to_vec)).unwrap(), Some(b"1".to_vec()));
        assert_eq!(get(t("apis"), b"c", |v| v.map(<[u8]>::to_vec)).unwrap(), None);
        assert!(COLLECTED.with(|c| c.borrow().is_none()));
    }

    #[test]
    fn collects_the_first_value_of_each_key_read_and_not_written() {
        let _f = Fixture::new("dry_run_reads", 0);
        transaction(|| {
            put(t("apis"), b"a", b"1")?;
            put(t("apis"), b"b", b"2")
        })
        .unwrap();
        let read = |key: &[u8]| get(t("apis"), key, |v| note_read(t("apis"), key, v));
        let (_, written, reads) = dry_run(|| {
            read(b"a")?;
            read(b"a")?;
            read(b"missing")?;
            // Read, then written: its write's value before is what PostgreSQL checks.
            read(b"b")?;
            put(t("apis"), b"b", b"3")?;
            put(t("apis"), b"c", b"4")?;
            read(b"c")?;
            Ok::<_, StoreError>(())
        })
        .unwrap();
        let apis = t("apis").id();
        assert_eq!(written.len(), 2);
        assert_eq!(reads, vec![Read { table: apis, key: b"a".to_vec(), value: Some(b"1".to_vec()) }, Read { table: apis, key: b"missing".to_vec(), value: None }]);
        // Outside a dry run nothing is noted.
        note_read(t("apis"), b"a", Some(b"1"));
        assert!(COLLECTED.with(|c| c.borrow().is_none()));
    }

    #[test]
    fn encodes_lengths_and_absences() {
        let w = [Written { table: 3, key: b"k".to_vec(), before: None, after: Some(b"vv".to_vec()) }];
        let head = [&[3u8][..], &1u32.to_le_bytes(), b"k", &(-1i32).to_le_bytes(), &2i32.to_le_bytes(), b"vv"].concat();
        assert_eq!(encode(&w, &[]), head);
        let r = [Read { table: 4, key: b"r".to_vec(), value: None }, Read { table: 5, key: b"s".to_vec(), value: Some(b"x".to_vec()) }];
        let reads = [&[READS][..], &[4], &1u32.to_le_bytes(), b"r", &(-1i32).to_le_bytes(), &[5], &1u32.to_le_bytes(), b"s", &1i32.to_le_bytes(), b"x"].concat();
        assert_eq!(encode(&w, &r), [head, reads].concat());
    }
}
