//! The verification cache: answers of keys.verifyKey that depend on stored records alone,
//! kept per serving thread and reused for as long as the store's records epoch they were
//! computed under is current (store::records_epoch: every committed record change bumps
//! it, in every thread and process sharing the store).
//!
//! Only answers that read no counter are kept: VALID for a key without credits, with no
//! limit applied, for a request without a permission query or named limits. What such an
//! answer depends on besides records is checked on every reuse: the caller's workspace and
//! the APIs its root key may verify, and the clock against the key's expiry.
//!
//! Layout: a fixed array of slots in pairs (2-way set associative) indexed by the key hash,
//! so memory is bounded by the slot count and a full cache replaces rather than clears.

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// Slots per thread unless `set_slots` says otherwise.
pub const DEFAULT_SLOTS: usize = 1 << 17;

static SLOTS: AtomicUsize = AtomicUsize::new(DEFAULT_SLOTS);
static HITS: AtomicU64 = AtomicU64::new(0);
static MISSES: AtomicU64 = AtomicU64::new(0);

/// Since the process started: (answers reused, answers of the kind the cache keeps that
/// were computed in full, because not kept yet or a record changed since).
pub fn counts() -> (u64, u64) {
    (HITS.load(Ordering::Relaxed), MISSES.load(Ordering::Relaxed))
}

/// Counts an answer of the kind the cache keeps: `hit` when it was reused.
pub fn count(hit: bool) {
    if hit { &HITS } else { &MISSES }.fetch_add(1, Ordering::Relaxed);
}

/// Sets the slot count of every thread's cache (rounded up to a power of two; 0 turns the
/// cache off). A thread's cache is rebuilt, empty, at its next use.
pub fn set_slots(slots: usize) {
    SLOTS.store(if slots == 0 { 0 } else { slots.max(2).next_power_of_two() }, Ordering::Relaxed);
}

/// One cached answer.
pub struct Entry {
    hash: [u8; 32],
    /// store::records_epoch of the snapshot the answer was computed from.
    epoch: (u64, u64),
    /// The key's expiry (ms); i64::MAX when it has none.
    expires_at_ms: i64,
    workspace_end: usize,
    api_end: usize,
    /// The key's workspace id, its API id, then the answer (`data` JSON).
    bytes: Box<[u8]>,
}

impl Entry {
    pub fn new(hash: [u8; 32], epoch: (u64, u64), expires_at_ms: Option<i64>, workspace_id: &[u8], api_id: &[u8], answer: &[u8]) -> Entry {
        let bytes = [workspace_id, api_id, answer].concat().into_boxed_slice();
        let workspace_end = workspace_id.len();
        Entry { hash, epoch, expires_at_ms: expires_at_ms.unwrap_or(i64::MAX), workspace_end, api_end: workspace_end + api_id.len(), bytes }
    }

    pub fn workspace_id(&self) -> &[u8] {
        &self.bytes[..self.workspace_end]
    }

    pub fn api_id(&self) -> &[u8] {
        &self.bytes[self.workspace_end..self.api_end]
    }

    pub fn answer(&self) -> &[u8] {
        &self.bytes[self.api_end..]
    }

    pub fn epoch(&self) -> (u64, u64) {
        self.epoch
    }

    /// The key has expired at `now_ms` (the answer no longer holds).
    pub fn expired(&self, now_ms: i64) -> bool {
        now_ms > self.expires_at_ms
    }
}

pub struct Cache {
    slots: Vec<Option<Box<Entry>>>,
}

impl Cache {
    pub fn new(slots: usize) -> Cache {
        Cache { slots: (0..slots).map(|_| None).collect() }
    }

    /// The first slot of the pair `hash` maps to (key hashes are uniform: their first bytes
    /// serve as the index); None when the cache is off.
    fn pair(&self, hash: &[u8; 32]) -> Option<usize> {
        let word = u64::from_le_bytes(hash[..8].try_into().expect("8 bytes"));
        (!self.slots.is_empty()).then(|| (word as usize & (self.slots.len() - 1)) & !1)
    }

    pub fn get(&self, hash: &[u8; 32]) -> Option<&Entry> {
        let i = self.pair(hash)?;
        self.slots[i..i + 2].iter().flatten().find(|e| &e.hash == hash).map(|e| &**e)
    }

    /// Keeps `entry`, in place of the entry of the same key if there is one, else in the
    /// pair's first slot (its previous occupant moves to the second, whose occupant goes).
    pub fn insert(&mut self, entry: Entry) {
        let Some(i) = self.pair(&entry.hash) else { return };
        let same = self.slots[i..i + 2].iter().position(|s| s.as_ref().is_some_and(|e| e.hash == entry.hash));
        match same {
            Some(j) => self.slots[i + j] = Some(Box::new(entry)),
            None => {
                self.slots.swap(i, i + 1);
                self.slots[i] = Some(Box::new(entry));
            }
        }
    }

    /// Forgets the entry of `hash` (its answer turned out not to hold).
    pub fn remove(&mut self, hash: &[u8; 32]) {
        let Some(i) = self.pair(hash) else { return };
        for slot in &mut self.slots[i..i + 2] {
            if slot.as_ref().is_some_and(|e| &e.hash == hash) {
                *slot = None;
            }
        }
    }
}

thread_local! {
    static CACHE: RefCell<Cache> = RefCell::new(Cache::new(0));
}

/// Runs `f` with this thread's cache (sized as `set_slots` last said).
pub fn with<R>(f: impl FnOnce(&mut Cache) -> R) -> R {
    CACHE.with(|c| {
        let mut c = c.borrow_mut();
        let slots = SLOTS.load(Ordering::Relaxed);
        if c.slots.len() != slots {
            *c = Cache::new(slots);
        }
        f(&mut c)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hash(first: u64, tag: u8) -> [u8; 32] {
        let mut h = [tag; 32];
        h[..8].copy_from_slice(&first.to_le_bytes());
        h
    }

    fn entry(h: [u8; 32], answer: &str) -> Entry {
        Entry::new(h, (1, 7), Some(100), b"ws_1", b"api_1", answer.as_bytes())
    }

    #[test]
    fn an_entry_keeps_its_parts_apart() {
        let e = entry(hash(0, 1), "{\"valid\":true}");
        assert_eq!(e.workspace_id(), b"ws_1");
        assert_eq!(e.api_id(), b"api_1");
        assert_eq!(e.answer(), b"{\"valid\":true}");
        assert_eq!(e.epoch(), (1, 7));
        assert!(!e.expired(100));
        assert!(e.expired(101));
        assert!(!Entry::new(hash(0, 1), (0, 0), None, b"", b"", b"").expired(i64::MAX));
    }

    #[test]
    fn two_keys_share_a_pair_and_a_third_evicts_the_older() {
        let mut c = Cache::new(8);
        let (a, b, d) = (hash(2, 1), hash(3, 2), hash(10, 3)); // all map to the pair at 2
        c.insert(entry(a, "a"));
        c.insert(entry(b, "b"));
        assert_eq!(c.get(&a).map(Entry::answer), Some(&b"a"[..]));
        assert_eq!(c.get(&b).map(Entry::answer), Some(&b"b"[..]));
        c.insert(entry(d, "d"));
        assert!(c.get(&a).is_none(), "the older of the pair goes");
        assert_eq!(c.get(&b).map(Entry::answer), Some(&b"b"[..]));
        assert_eq!(c.get(&d).map(Entry::answer), Some(&b"d"[..]));
        assert!(c.get(&hash(4, 9)).is_none(), "another pair");
    }

    #[test]
    fn reinserting_a_key_replaces_its_entry_only() {
        let mut c = Cache::new(8);
        let (a, b) = (hash(2, 1), hash(3, 2));
        c.insert(entry(a, "a"));
        c.insert(entry(b, "b"));
        c.insert(entry(b, "b2"));
        assert_eq!(c.get(&a).map(Entry::answer), Some(&b"a"[..]));
        assert_eq!(c.get(&b).map(Entry::answer), Some(&b"b2"[..]));
        c.remove(&b);
        assert!(c.get(&b).is_none());
        assert!(c.get(&a).is_some());
    }

    #[test]
    fn an_off_cache_keeps_nothing() {
        let mut c = Cache::new(0);
        c.insert(entry(hash(2, 1), "a"));
        assert!(c.get(&hash(2, 1)).is_none());
        c.remove(&hash(2, 1));
    }
}
