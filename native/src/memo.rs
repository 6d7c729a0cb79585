//! A per-thread memo of values read from the store that stay right under one tag (limit.rs:
//! namespace ids per store generation, and whether a namespace has overrides per records
//! epoch; verify.rs: live APIs, and the permissions deleted but still on keys, per records
//! epoch). A lookup under another tag finds nothing, and keeping a value under a new tag,
//! or in a full memo, starts it over, so it never holds more than `max` values.
//!
//! Contract for callers: keep only what was read from committed data (not inside a
//! transaction that changed records, `store::uncommitted_record_change`), under the tag that
//! data was read under.

use std::cell::RefCell;
use std::collections::HashMap;
use std::thread::LocalKey;

use crate::store;

pub struct Memo<T, V> {
    tag: Option<T>,
    values: HashMap<Box<[u8]>, V>,
    max: usize,
}

impl<T: PartialEq, V> Memo<T, V> {
    pub fn new(max: usize) -> Memo<T, V> {
        Memo { tag: None, values: HashMap::new(), max }
    }

    /// The value kept for `key` under `tag`.
    pub fn get(&self, tag: &T, key: &[u8]) -> Option<&V> {
        if self.tag.as_ref() == Some(tag) { self.values.get(key) } else { None }
    }

    /// Keeps `value` for `key` under `tag`.
    pub fn keep(&mut self, tag: T, key: &[u8], value: V) {
        if self.tag.as_ref() != Some(&tag) || self.values.len() >= self.max {
            self.values.clear();
            self.tag = Some(tag);
        }
        self.values.insert(key.into(), value);
    }
}

/// The value for `key` under the records epoch `epoch`: the one `memo` keeps, else what
/// `read` returns, kept when it was read from committed data (the contract above).
pub fn under_epoch<V: Clone, E>(memo: &'static LocalKey<RefCell<Memo<(u64, u64), V>>>, epoch: (u64, u64), key: &[u8], read: impl FnOnce() -> Result<V, E>) -> Result<V, E> {
    if let Some(known) = memo.with(|m| m.borrow().get(&epoch, key).cloned()) {
        return Ok(known);
    }
    let value = read()?;
    // Read inside a transaction that changed records, it may not be committed yet.
    if !store::uncommitted_record_change() {
        memo.with(|m| m.borrow_mut().keep(epoch, key, value.clone()));
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_hold_under_their_tag_and_a_new_tag_or_a_full_memo_starts_over() {
        let mut m = Memo::new(2);
        assert_eq!(m.get(&1, b"a"), None);
        m.keep(1, b"a", "A");
        m.keep(1, b"b", "B");
        assert_eq!((m.get(&1, b"a"), m.get(&1, b"b")), (Some(&"A"), Some(&"B")));
        assert_eq!(m.get(&2, b"a"), None, "another tag");
        m.keep(1, b"c", "C");
        assert_eq!((m.get(&1, b"a"), m.get(&1, b"c")), (None, Some(&"C")), "full: started over");
        m.keep(2, b"a", "A2");
        assert_eq!((m.get(&1, b"c"), m.get(&2, b"a")), (None, Some(&"A2")), "a new tag: started over");
    }
}
