//! Reads: one consistent view of several records (`View`, what the hot procedures read
//! through), a single `get`, and range scans. Keys are 1..=`MAX_KEY_BYTES` bytes. Each read
//! tells pending.rs what it covers (a read of what the open batch changed is noted).

use super::env::{Store, Txn};
use super::error::{lmdb_failed, Result, StoreError};
use super::pending;
use super::read_txn::with_read;
use super::table::Table;
use super::write_txn::in_transaction;

/// LMDB's compiled-in maximum key size (mdb_env_get_maxkeysize with the default build).
pub const MAX_KEY_BYTES: usize = 511;

pub(super) fn check_key(key: &[u8]) -> Result<()> {
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

/// One consistent read of several records (the hot procedures use it): this thread's write
/// transaction inside `transaction`, otherwise one short read-only transaction. Slices
/// returned by `get` live as long as the view.
///
/// A transaction has one cursor per table (ffi/lmdb.rs), opened on first use in it and used
/// for every get, put and del of that table in it. A cursor that stays on a leaf page finds
/// keys on that page without descending from the root again (LMDB's mdb_cursor_set checks
/// the current page first), so the reads and writes a hot call makes on neighbouring keys (a
/// key's credits and windows, one identifier's window) cost one descent.
pub struct View<'t> {
    pub(super) store: &'t Store,
    pub(super) txn: &'t Txn,
}

impl<'t> View<'t> {
    pub fn get(&self, table: Table, key: &[u8]) -> Result<Option<&'t [u8]>> {
        check_key(key)?;
        pending::read_key(table, key);
        self.txn.cursor(self.store.dbi(table))?.get(key).map_err(lmdb_failed("get"))
    }

    /// The generation of the store this view reads (see `last_generation`).
    pub fn generation(&self) -> u64 {
        self.store.generation
    }

    /// The id of the last write transaction committed when this view's snapshot was taken
    /// (by any thread or process): two views with one id read the same data.
    pub fn snapshot_id(&self) -> u64 {
        // A view inside this thread's write transaction reads through it, and a write
        // transaction's id is the one it will commit as.
        self.txn.id() - u64::from(in_transaction())
    }

    /// The last key of the table, if it has any (slice lives as the view).
    pub fn last_key(&self, table: Table) -> Result<Option<&'t [u8]>> {
        pending::read(table, &[], None);
        self.txn.cursor(self.store.dbi(table))?.last_key().map_err(lmdb_failed("get"))
    }

    /// The first key `>= key` in the table, if any (slice lives as the view).
    pub fn first_key_from(&self, table: Table, key: &[u8]) -> Result<Option<&'t [u8]>> {
        check_key(key)?;
        pending::read(table, key, None);
        self.txn.cursor(self.store.dbi(table))?.first_key_from(key).map_err(lmdb_failed("get"))
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

/// Runs `f` over one read view (see `View`). `f` must not call back into the store.
pub fn view<R, E: From<StoreError>>(f: impl FnOnce(&View<'_>) -> Result<R, E>) -> Result<R, E> {
    with_read(|store, txn| f(&View { store, txn }))
}

/// Calls `f` with the value stored under `key` (valid only during `f`), or `None`.
pub fn get<R>(table: Table, key: &[u8], f: impl FnOnce(Option<&[u8]>) -> R) -> Result<R> {
    check_key(key)?;
    pending::read_key(table, key);
    with_read(|store, txn| Ok(f(txn.cursor(store.dbi(table))?.get(key).map_err(lmdb_failed("get"))?)))
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
    with_read(|store, txn| scan(store, txn, table, start, end, limit, &mut visit))
}

/// The cursor walk of `range` over a given transaction; slices live as long as `txn` ('t).
fn scan<'t, E: From<StoreError>>(
    store: &Store,
    txn: &'t Txn,
    table: Table,
    start: &[u8],
    end: Option<&[u8]>,
    limit: usize,
    visit: &mut impl FnMut(&'t [u8], &'t [u8]) -> Result<(), E>,
) -> Result<(), E> {
    pending::read(table, start, end);
    let mut walk = txn.walk(store.dbi(table), start).map_err(lmdb_failed("mdb_cursor_open"))?;
    let mut seen = 0;
    while seen < limit {
        let Some((key, value)) = walk.next_entry().map_err(lmdb_failed("range"))? else { break };
        if end.is_some_and(|end| key >= end) {
            break;
        }
        visit(key, value)?;
        seen += 1;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::tests::{collect, get_vec, put_one, t, Fixture};
    use crate::store::write::{del, put};
    use crate::store::write_txn::transaction;

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
}
