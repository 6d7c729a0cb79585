//! The verification cache, kept per serving thread: for each key verified lately, its stored
//! record and, where there is one, the answer of keys.verifyKey that depends on stored
//! records alone. An entry is used only while the store's records epoch it was read under is
//! current (store::records_epoch: every committed record change bumps it, in every thread
//! and process sharing the store), so it never shows a record older than the reader's
//! snapshot would. A record found unchanged in the key table under a later epoch is renewed
//! to that epoch (any record change bumps the epoch, so without this a management write
//! anywhere, e.g. one createKey, would make every kept record useless); an answer, which
//! depends on more records than the key's, never is.
//!
//! - The record: every verification of a known key reads it from here instead of descending
//!   the key table's B-tree (pages read at random places: cache misses). Counters
//!   (credits, windows) are never cached; they are read from the counter log every time.
//! - The answer: only VALID for a key without credits, with no limit applied, for a request
//!   without a permission query or named limits. What such an answer depends on besides
//!   records is checked on every reuse: the caller's workspace and the APIs its root key may
//!   verify, and the clock against the key's expiry.
//!
//! An entry larger than `MAX_ENTRY_BYTES` (a key with very many permissions or a large meta)
//! is not kept, so a full cache stays within slots × that size.
//!
//! Layout: a fixed array of sets of `WAYS` slots (set associative) indexed by the key hash,
//! so memory is bounded by the slot count and a full cache replaces the least recently used
//! entry of a set rather than clearing. A set is one cache line: each slot holds a tag (other
//! bytes of the key hash) beside the entry, so a lookup reads one line and then one entry.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use crate::slots::prefetch_line;

/// Slots per thread unless `set_slots` says otherwise.
pub const DEFAULT_SLOTS: usize = 1 << 17;

static SLOTS: AtomicUsize = AtomicUsize::new(DEFAULT_SLOTS);
static ANSWER_HITS: AtomicU64 = AtomicU64::new(0);
static ANSWER_MISSES: AtomicU64 = AtomicU64::new(0);
static RECORD_HITS: AtomicU64 = AtomicU64::new(0);
static RECORD_MISSES: AtomicU64 = AtomicU64::new(0);

/// What the caches did since the process started.
pub struct Counts {
    /// Answers reused.
    pub answer_hits: u64,
    /// Answers of the kind the cache keeps that were computed in full (not kept yet, or a
    /// record changed since).
    pub answer_misses: u64,
    /// Verifications computed in full that read the key's record from the cache.
    pub record_hits: u64,
    /// Verifications computed in full that read the key table (unknown keys included).
    pub record_misses: u64,
}

pub fn counts() -> Counts {
    let n = |c: &AtomicU64| c.load(Ordering::Relaxed);
    Counts { answer_hits: n(&ANSWER_HITS), answer_misses: n(&ANSWER_MISSES), record_hits: n(&RECORD_HITS), record_misses: n(&RECORD_MISSES) }
}

/// Counts an answer of the kind the cache keeps: `hit` when it was reused.
pub fn count_answer(hit: bool) {
    if hit { &ANSWER_HITS } else { &ANSWER_MISSES }.fetch_add(1, Ordering::Relaxed);
}

/// Counts a verification computed in full: `hit` when it read the key's record from here.
pub fn count_record(hit: bool) {
    if hit { &RECORD_HITS } else { &RECORD_MISSES }.fetch_add(1, Ordering::Relaxed);
}

/// The cache is on (`set_slots` last gave it slots): only then is there anything to keep.
pub fn enabled() -> bool {
    SLOTS.load(Ordering::Relaxed) != 0
}

/// Sets the slot count of every thread's cache (rounded up to a power of two; 0 turns the
/// cache off). A thread's cache is rebuilt, empty, at its next use.
pub fn set_slots(slots: usize) {
    SLOTS.store(if slots == 0 { 0 } else { slots.max(WAYS).next_power_of_two() }, Ordering::Relaxed);
}

/// One cached key: its record and, when kept, its records-only answer.
pub struct Entry {
    hash: [u8; 32],
    /// store::records_epoch of the latest snapshot the record was read from or found
    /// unchanged in.
    record_epoch: Cell<(u64, u64)>,
    /// store::records_epoch of the snapshot the answer was computed from.
    answer_epoch: (u64, u64),
    /// The key's expiry (ms); i64::MAX when it has none.
    expires_at_ms: i64,
    workspace_end: usize,
    api_end: usize,
    record_end: usize,
    has_answer: bool,
    /// The key's workspace id, its API id, its stored record, then the answer (`data` JSON).
    bytes: Box<[u8]>,
}

impl Entry {
    pub fn new(hash: [u8; 32], epoch: (u64, u64), expires_at_ms: Option<i64>, workspace_id: &[u8], api_id: &[u8], record: &[u8], answer: Option<&[u8]>) -> Entry {
        let bytes = [workspace_id, api_id, record, answer.unwrap_or_default()].concat().into_boxed_slice();
        let workspace_end = workspace_id.len();
        let api_end = workspace_end + api_id.len();
        let record_end = api_end + record.len();
        Entry { hash, record_epoch: Cell::new(epoch), answer_epoch: epoch, expires_at_ms: expires_at_ms.unwrap_or(i64::MAX), workspace_end, api_end, record_end, has_answer: answer.is_some(), bytes }
    }

    pub fn workspace_id(&self) -> &[u8] {
        &self.bytes[..self.workspace_end]
    }

    pub fn api_id(&self) -> &[u8] {
        &self.bytes[self.workspace_end..self.api_end]
    }

    /// The key's stored record (records::key decodes it).
    pub fn record(&self) -> &[u8] {
        &self.bytes[self.api_end..self.record_end]
    }

    pub fn answer(&self) -> Option<&[u8]> {
        self.has_answer.then(|| &self.bytes[self.record_end..])
    }

    pub fn record_epoch(&self) -> (u64, u64) {
        self.record_epoch.get()
    }

    /// The record was found unchanged in the snapshot of records epoch `epoch`.
    pub fn renew(&self, epoch: (u64, u64)) {
        self.record_epoch.set(epoch);
    }

    pub fn answer_epoch(&self) -> (u64, u64) {
        self.answer_epoch
    }

    /// The key has expired at `now_ms` (the answer no longer holds).
    pub fn expired(&self, now_ms: i64) -> bool {
        now_ms > self.expires_at_ms
    }
}

/// The most bytes of ids, record and answer an entry may hold; typical keys take 200–500.
pub const MAX_ENTRY_BYTES: usize = 2048;

/// Slots per set. Uniform keys over a full cache of 131,072 slots: 4 ways keep 89% of
/// 100,000 keys, 2 ways 81% (simulated).
const WAYS: usize = 4;

/// Lines of a record `get` fetches ahead (a key with credits and one limit: about 200 bytes).
const RECORD_LINES_AHEAD: usize = 4;

#[derive(Clone, Default)]
struct Slot {
    /// Bytes 24..32 of the entry's key hash (the set is chosen by bytes 0..8).
    tag: u64,
    entry: Option<Rc<Entry>>,
}

/// One set, most recently used first, on a cache line of its own.
#[derive(Clone, Default)]
#[repr(align(64))]
struct Set([Slot; WAYS]);

pub struct Cache {
    sets: Vec<Set>,
}

impl Cache {
    pub fn new(slots: usize) -> Cache {
        Cache { sets: vec![Set::default(); slots / WAYS] }
    }

    /// The set `hash` maps to and its tag there (key hashes are uniform, so their bytes
    /// serve as they are); None when the cache is off.
    fn locate(&self, hash: &[u8; 32]) -> Option<(usize, u64)> {
        let word = |at: usize| u64::from_le_bytes(hash[at..at + 8].try_into().expect("8 bytes"));
        (!self.sets.is_empty()).then(|| (word(0) as usize & (self.sets.len() - 1), word(24)))
    }

    /// The position of `hash`'s entry in set `i`.
    fn find(&self, i: usize, tag: u64, hash: &[u8; 32]) -> Option<usize> {
        self.sets[i].0.iter().position(|s| s.tag == tag && s.entry.as_ref().is_some_and(|e| &e.hash == hash))
    }

    /// The entry of `hash`, shared (it stays valid while the cache changes); it becomes its
    /// set's most recently used.
    pub fn get(&mut self, hash: &[u8; 32]) -> Option<Rc<Entry>> {
        let (i, tag) = self.locate(hash)?;
        let j = self.find(i, tag, hash)?;
        let set = &mut self.sets[i].0;
        set[..=j].rotate_right(1);
        let entry = set[0].entry.clone()?;
        // The caller reads the record next, after other work (the records epoch): its first
        // lines start coming in now rather than one miss after the other then.
        for line in entry.record().chunks(64).take(RECORD_LINES_AHEAD) {
            prefetch_line(&line[0]);
        }
        Some(entry)
    }

    /// Keeps `entry` as its set's most recently used, in place of the entry of the same key
    /// if there is one, else of the set's least recently used. An entry over
    /// `MAX_ENTRY_BYTES` is not kept, and the key's earlier entry goes.
    pub fn insert(&mut self, entry: Entry) {
        let Some((i, tag)) = self.locate(&entry.hash) else { return };
        let same = self.find(i, tag, &entry.hash);
        if entry.bytes.len() > MAX_ENTRY_BYTES {
            if let Some(j) = same {
                self.sets[i].0[j] = Slot::default();
            }
            return;
        }
        let j = same.unwrap_or(WAYS - 1);
        let set = &mut self.sets[i].0;
        set[..=j].rotate_right(1);
        set[0] = Slot { tag, entry: Some(Rc::new(entry)) };
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
        if c.sets.len() * WAYS != slots {
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
        Entry::new(h, (1, 7), Some(100), b"ws_1", b"api_1", b"record", Some(answer.as_bytes()))
    }

    fn answer(e: Rc<Entry>) -> Vec<u8> {
        e.answer().expect("an answer").to_vec()
    }

    #[test]
    fn an_entry_keeps_its_parts_apart() {
        let e = entry(hash(0, 1), "{\"valid\":true}");
        assert_eq!(e.workspace_id(), b"ws_1");
        assert_eq!(e.api_id(), b"api_1");
        assert_eq!(e.record(), b"record");
        assert_eq!(e.answer(), Some(&b"{\"valid\":true}"[..]));
        assert_eq!((e.record_epoch(), e.answer_epoch()), ((1, 7), (1, 7)));
        e.renew((1, 9));
        assert_eq!((e.record_epoch(), e.answer_epoch()), ((1, 9), (1, 7)), "renewing the record leaves the answer as it was");
        assert!(!e.expired(100));
        assert!(e.expired(101));
        let record_only = Entry::new(hash(0, 1), (0, 0), None, b"ws", b"", b"r", None);
        assert!(!record_only.expired(i64::MAX));
        assert_eq!(record_only.record(), b"r");
        assert_eq!(record_only.answer(), None, "no answer, not an empty one");
    }

    #[test]
    fn a_full_set_replaces_its_least_recently_used() {
        let mut c = Cache::new(16); // 4 sets
        let [a, b, d, e, f] = [2, 6, 10, 14, 18].map(|first| hash(first, first as u8)); // all in set 2
        for (h, text) in [(a, "a"), (b, "b"), (d, "d"), (e, "e")] {
            c.insert(entry(h, text));
        }
        assert_eq!(c.get(&a).map(answer), Some(b"a".to_vec()), "a is now the most recently used");
        c.insert(entry(f, "f"));
        assert!(c.get(&b).is_none(), "b was the least recently used");
        for (h, text) in [(a, "a"), (d, "d"), (e, "e"), (f, "f")] {
            assert_eq!(c.get(&h).map(answer), Some(text.as_bytes().to_vec()));
        }
        assert!(c.get(&hash(3, 9)).is_none(), "another set");
    }

    #[test]
    fn a_tag_match_alone_is_not_a_hit() {
        let mut c = Cache::new(16);
        let a = hash(2, 1);
        let mut same_set_and_tag = a;
        same_set_and_tag[12] ^= 1; // neither the set's bytes nor the tag's
        c.insert(entry(a, "a"));
        assert!(c.get(&same_set_and_tag).is_none());
        assert_eq!(c.get(&a).map(answer), Some(b"a".to_vec()));
    }

    #[test]
    fn reinserting_a_key_replaces_its_entry_only() {
        let mut c = Cache::new(8);
        let (a, b) = (hash(2, 1), hash(4, 2));
        c.insert(entry(a, "a"));
        c.insert(entry(b, "b"));
        c.insert(entry(b, "b2"));
        assert_eq!(c.get(&a).map(answer), Some(b"a".to_vec()));
        assert_eq!(c.get(&b).map(answer), Some(b"b2".to_vec()));
    }

    #[test]
    fn an_entry_over_the_size_limit_is_not_kept_and_its_key_loses_the_older_one() {
        let mut c = Cache::new(8);
        let a = hash(2, 1);
        c.insert(entry(a, "a"));
        c.insert(Entry::new(a, (1, 8), None, b"ws_1", b"api_1", &[0; MAX_ENTRY_BYTES], None));
        assert!(c.get(&a).is_none());
        c.insert(Entry::new(a, (1, 8), None, b"", b"", &[0; MAX_ENTRY_BYTES], None));
        assert!(c.get(&a).is_some(), "exactly the limit is kept");
    }

    #[test]
    fn an_off_cache_keeps_nothing() {
        let mut c = Cache::new(0);
        c.insert(entry(hash(2, 1), "a"));
        assert!(c.get(&hash(2, 1)).is_none());
    }
}
