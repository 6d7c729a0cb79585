//! What this thread's open batch (batch.rs) changed, and whether a read saw it.
//!
//! Contract: an answer computed through the batch stands whatever becomes of the batch unless
//! it read something the batch changed; such a read is noted, and `take_uncommitted_read`
//! tells the caller (JS: the hot calls' Effect::ReadUncommitted, the durability gate for the
//! other requests), whose reply then stands only if the batch commits.
//!
//! - Records: every key `put` or `del` changes in the batch (write.rs), those of a transaction
//!   nested in it kept apart until it is merged (and dropped if it is discarded). A `get` of
//!   one of them, a range scan over one, or a seek in a table the batch changed at or past
//!   its start (view.rs) is noted. The records epoch, which the batch bumps, is bookkeeping
//!   and not a change here: it is not written through `put`. What a nested transaction reads
//!   is its writer's, and is not noted past its end.
//! - Counters: a read that finds the counter in the transaction's own changes (counterlog,
//!   txn_log.rs `current`) calls `note_uncommitted_read`.
//!
//! Forgotten when a batch begins and when it ends (committed or discarded). Outside a batch
//! nothing is kept: a transaction of its own commits with the write of the request it runs for.

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound;

use super::batch::in_batch;
use super::table::Table;

/// Record keys by table: a read looks its own key or range up without copying it.
type Changed = BTreeMap<Table, BTreeSet<Box<[u8]>>>;

#[derive(Default)]
struct Pending {
    /// The records the batch changed (merged nested transactions' included).
    batch: Changed,
    /// The records the transaction nested in the batch changed, while one runs.
    nested: Option<Changed>,
    /// Whether an uncommitted read was noted when the nested transaction began.
    read_before_nested: bool,
}

thread_local! {
    static PENDING: RefCell<Pending> = RefCell::new(Pending::default());
    /// A read saw what the open batch changed, since the batch began or the last take.
    static UNCOMMITTED_READ: Cell<bool> = const { Cell::new(false) };
}

/// A batch begins or ends: nothing it changed is kept.
pub(super) fn forget() {
    PENDING.with(|p| *p.borrow_mut() = Pending::default());
    UNCOMMITTED_READ.set(false);
}

/// A transaction nested in the batch begins.
pub(super) fn nested_begin() {
    PENDING.with(|p| {
        let mut p = p.borrow_mut();
        p.nested = Some(Changed::new());
        p.read_before_nested = UNCOMMITTED_READ.get();
    });
}

/// The nested transaction ended: its changes are the batch's when it was merged (`merged`).
/// What it read is its writer's, whose reply waits for the batch anyway (or, discarded, came
/// after an await): the note is as it was when it began.
pub(super) fn nested_end(merged: bool) {
    PENDING.with(|p| {
        let mut p = p.borrow_mut();
        if let (Some(nested), true) = (p.nested.take(), merged) {
            for (table, mut keys) in nested {
                p.batch.entry(table).or_default().append(&mut keys);
            }
        }
        UNCOMMITTED_READ.set(p.read_before_nested);
    });
}

/// `put` or `del` of a record (write.rs); kept only inside a batch.
pub(super) fn changed(table: Table, key: &[u8]) {
    if !in_batch() {
        return;
    }
    PENDING.with(|p| {
        let mut p = p.borrow_mut();
        let p = &mut *p;
        p.nested.as_mut().unwrap_or(&mut p.batch).entry(table).or_default().insert(key.into());
    });
}

/// A read of the records of `table` from `start` up to `end` (excluded; None: to the table's
/// end); a `get` is the range of its key alone (`read_key`).
pub(super) fn read(table: Table, start: &[u8], end: Option<&[u8]>) {
    if end.is_some_and(|end| end <= start) {
        return;
    }
    let to = end.map_or(Bound::Unbounded, Bound::Excluded);
    saw_if(|changed| changed.get(&table).is_some_and(|keys| keys.range::<[u8], _>((Bound::Included(start), to)).next().is_some()));
}

/// A `get` of `key` in `table`.
pub(super) fn read_key(table: Table, key: &[u8]) {
    saw_if(|changed| changed.get(&table).is_some_and(|keys| keys.contains(key)));
}

/// Notes an uncommitted read when `hits` finds one in the batch's changes or the nested
/// transaction's (not asked when the batch changed no record).
fn saw_if(hits: impl Fn(&Changed) -> bool) {
    let saw = PENDING.with(|p| {
        let p = p.borrow();
        (!p.batch.is_empty() && hits(&p.batch)) || p.nested.as_ref().is_some_and(|n| !n.is_empty() && hits(n))
    });
    if saw {
        UNCOMMITTED_READ.set(true);
    }
}

/// A read of this thread's found a counter its open batch changed (counterlog). No-op
/// outside a batch.
pub fn note_uncommitted_read() {
    if in_batch() {
        UNCOMMITTED_READ.set(true);
    }
}

/// Whether this thread read what its open batch changed since the batch began or the last
/// take: an answer computed from such a read stands only if the batch commits. Clears it.
pub fn take_uncommitted_read() -> bool {
    UNCOMMITTED_READ.replace(false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::batch::{batch_abort, batch_begin, batch_commit};
    use crate::store::error::StoreError;
    use crate::store::tests::{put_one, t, Fixture};
    use crate::store::view::{get, range, view};
    use crate::store::write::{del, put};
    use crate::store::write_txn::transaction;

    fn get_key(table: &str, key: &[u8]) {
        get(t(table), key, |_| ()).unwrap();
    }

    fn scan(table: &str, start: &[u8], end: Option<&[u8]>) {
        range(t(table), start, end, usize::MAX, |_, _| Ok::<_, StoreError>(())).unwrap();
    }

    #[test]
    fn a_read_is_noted_only_when_it_covers_what_the_batch_changed() {
        let _f = Fixture::new("pending", 0);
        put_one(t("keys"), b"k1", b"1");
        put_one(t("keys"), b"k2", b"1");
        batch_begin().unwrap();
        get_key("keys", b"k1");
        assert!(!take_uncommitted_read(), "the batch changed nothing yet");
        transaction(|| put(t("keys"), b"k3", b"1")).unwrap();
        transaction(|| del(t("keys"), b"k2").map(|_| ())).unwrap();
        get_key("keys", b"k1");
        scan("keys", b"k0", Some(b"k2"));
        scan("apis", b"", None);
        view(|v| v.get(t("apis"), b"k3").map(|_| ())).unwrap();
        assert!(!take_uncommitted_read(), "reads of other keys, before k2, of another table");
        get_key("keys", b"k2");
        assert!(take_uncommitted_read(), "a key the batch deleted");
        assert!(!take_uncommitted_read(), "a take clears it");
        scan("keys", b"k0", None);
        assert!(take_uncommitted_read(), "a scan over them");
        view(|v| v.last_key(t("keys")).map(|_| ())).unwrap();
        assert!(take_uncommitted_read(), "the table's last key");
        view(|v| v.first_key_from(t("keys"), b"k4").map(|_| ())).unwrap();
        assert!(!take_uncommitted_read(), "a seek past them");
        // A nested transaction that fails leaves nothing behind; the batch's end forgets all.
        let failed: Result<(), StoreError> = transaction(|| {
            put(t("apis"), b"a", b"1")?;
            get_key("apis", b"a");
            assert!(UNCOMMITTED_READ.get(), "inside it, its own write");
            Err(StoreError::BadArgument("refused".into()))
        });
        assert!(failed.is_err());
        assert!(!take_uncommitted_read(), "the nested transaction's reads are its own");
        get_key("apis", b"a");
        assert!(!take_uncommitted_read(), "once it was discarded");
        get_key("keys", b"k3");
        assert!(batch_commit().unwrap());
        assert!(!take_uncommitted_read(), "the batch ended");
        batch_begin().unwrap();
        get_key("keys", b"k3");
        assert!(!take_uncommitted_read(), "committed by the last batch");
        assert!(batch_abort());
    }
}
