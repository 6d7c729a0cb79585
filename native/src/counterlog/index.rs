//! The index: per process, name → (sequence number, record) of every live counter, built by
//! reading the whole log and kept equal to the committed log (see the module comment of
//! counterlog/: "Index").

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash, Hasher};
use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::slots::Slots;
use crate::store::{StoreError, Table, View};
use crate::window::Window;

use super::layout::{is_window, journal_key, seq_of, split, Key, LogState, Value, JOURNAL_KEEP, LOG};

type Result<T> = std::result::Result<T, StoreError>;

#[derive(Clone, Copy, Default)]
pub(super) struct Entry {
    pub(super) seq: u64,
    pub(super) value: Value,
}

/// Names are SHA-256 digests after the tag: eight of their bytes are a hash already. The
/// tables hash a name by its last eight bytes (slots.rs, and `TakeU64` for a transaction's
/// changes); the shard is chosen by another byte (`shard_of`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) struct Digest(pub(super) Key);

/// The shard of a name: its first digest byte, not one of the hashed bytes (a shard byte
/// among those would leave a shard's names a fraction of its slots to hash to).
fn shard_of(key: &Key) -> usize {
    usize::from(key[1])
}

impl Hash for Digest {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(u64::from_le_bytes(self.0[8..16].try_into().expect("8 bytes")));
    }
}

#[derive(Default)]
pub(super) struct TakeU64(u64);

impl Hasher for TakeU64 {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
}

pub(super) type Map<V> = HashMap<Digest, V, BuildHasherDefault<TakeU64>>;

/// The live counters, in `SHARDS` tables (slots.rs) by a byte of the name (`shard_of`): a
/// table doubles (and moves every entry) when it fills, which for one table of a million
/// counters stalled the serving thread for a quarter of a second; a shard moves a 256th of
/// that.
pub(super) struct Live(Vec<Slots<Entry>>);

const SHARDS: usize = 256;

impl Live {
    fn shard_mut(&mut self, key: &Key) -> &mut Slots<Entry> {
        if self.0.is_empty() {
            self.0 = (0..SHARDS).map(|_| Slots::default()).collect();
        }
        &mut self.0[shard_of(key)]
    }

    pub(super) fn get(&self, key: &Key) -> Option<&Entry> {
        self.0.get(shard_of(key)).and_then(|t| t.get(key))
    }

    /// Slots of every shard: what one round of `stale_windows` looks at.
    pub(super) fn slots(&self) -> usize {
        self.0.iter().map(Slots::capacity).sum()
    }

    /// Starts reading where `get(key)` will look (slots.rs).
    pub(super) fn prefetch(&self, key: &Key) {
        if let Some(t) = self.0.get(shard_of(key)) {
            t.prefetch(key);
        }
    }

    pub(super) fn insert(&mut self, key: &Key, entry: Entry) {
        self.shard_mut(key).insert(*key, entry);
    }

    /// Keeps `entry` unless the counter has a newer one.
    fn insert_newer(&mut self, key: &Key, entry: Entry) {
        if self.get(key).is_none_or(|current| current.seq <= entry.seq) {
            self.insert(key, entry);
        }
    }

    pub(super) fn remove(&mut self, key: &Key) {
        if let Some(t) = self.0.get_mut(shard_of(key)) {
            t.remove(key);
        }
    }

    /// The windows stale at `now_ms` among the next `budget` slots from `at` (shard, slot),
    /// into `out`; `at` moves on (back to the start after the last shard).
    pub(super) fn stale_windows(&self, now_ms: i64, at: &mut (usize, usize), budget: usize, out: &mut Vec<Key>) {
        let mut seen = Vec::new();
        let mut left = budget;
        while left > 0 && !self.0.is_empty() {
            let (shard, slot) = *at;
            let table = &self.0[shard % SHARDS];
            seen.clear();
            let (next, looked) = table.scan(slot, left, &mut seen);
            // An empty shard (or its end) still costs a little, so a call always ends.
            left = left.saturating_sub(looked.max(1));
            out.extend(seen.iter().filter(|(k, e)| is_window(k) && Window::decode(&e.value).is_none_or(|w| w.is_stale(now_ms))).map(|(k, _)| *k));
            *at = if next == 0 { ((shard + 1) % SHARDS, 0) } else { (shard, next) };
        }
    }
}

pub(super) struct Index {
    /// The store generation it was built for (0: not built).
    pub(super) generation: u64,
    /// The highest sequence number read or appended.
    pub(super) high: u64,
    /// The index holds everything committed up to this transaction id (`View::snapshot_id`;
    /// 0: not known), and `state` is the `LogState` stored then: the removals it has taken
    /// out are `state.removals`.
    pub(super) synced: u64,
    pub(super) state: LogState,
    /// Garbage visits go on after this sequence number.
    pub(super) gc_after: u64,
    /// Committed appends whose garbage visits are not paid yet (fewer than `GC_BATCH`).
    pub(super) gc_debt: usize,
    /// Where `prune` goes on in `live` (shard, slot).
    pub(super) prune_at: (usize, usize),
    /// Index slots the commits here still `prune` (see before_commit): set to two rounds of
    /// the index whenever records another process appended are read in, so the commits prune
    /// while that process writes and for two rounds after its last append, then leave it to
    /// the sweeper (a store seeded once by another process must not pay for it for good).
    pub(super) foreign_prune: usize,
    pub(super) live: Live,
}

static INDEX: Mutex<Index> = Mutex::new(Index {
    generation: 0,
    high: 0,
    synced: 0,
    state: LogState { high: 0, removals: 0 },
    gc_after: 0,
    gc_debt: 0,
    prune_at: (0, 0),
    foreign_prune: 0,
    live: Live(Vec::new()),
});

pub(super) fn lock() -> MutexGuard<'static, Index> {
    INDEX.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Index {
    /// Reads the log into the index when it was built for another open of the store or
    /// another process removed counters since, and the records appended since it last looked
    /// (by another process) otherwise. Returns the stored `LogState` `v` sees.
    pub(super) fn refresh(&mut self, v: &View<'_>) -> Result<LogState> {
        if self.generation != v.generation() {
            self.live = Live(Vec::new());
            self.generation = v.generation();
            self.high = 0;
            (self.synced, self.state) = (0, LogState::default());
            self.gc_after = 0;
            self.gc_debt = 0;
            (self.prune_at, self.foreign_prune) = ((0, 0), 0);
        }
        // Nothing was committed since the index last caught up (the usual case with one
        // process), or `v` reads an older snapshot than the index holds already.
        let snapshot = v.snapshot_id();
        if snapshot <= self.synced {
            return Ok(self.state);
        }
        let state = LogState::read(v)?;
        if state.removals > self.state.removals && self.high > 0 && !self.take_out_removed(v, state.removals)? {
            self.live = Live(Vec::new());
            self.high = 0;
        }
        let last = v.last_key(LOG)?.map_or(0, seq_of).max(state.high);
        if last > self.high {
            self.read_from_high(v, last)?;
        }
        (self.synced, self.state) = (snapshot, state);
        Ok(state)
    }

    /// Reads the records after `self.high` up to `last` into the index.
    fn read_from_high(&mut self, v: &View<'_>, last: u64) -> Result<()> {
        // Past the first read, these are records another process appended.
        let foreign = self.high > 0;
        let start = if foreign { (self.high + 1).to_be_bytes().to_vec() } else { Vec::new() };
        let live = &mut self.live;
        v.range(LOG, &start, None, usize::MAX, |k, record| {
            let (key, value) = split(record)?;
            live.insert_newer(&key, Entry { seq: seq_of(k), value });
            Ok::<_, StoreError>(())
        })?;
        self.high = self.high.max(last);
        // Two rounds of the index as it is with them (they may have grown it).
        if foreign {
            self.foreign_prune = 2 * self.live.slots();
        }
        Ok(())
    }

    /// Takes out the counters removed after `self.state.removals` up to `upto` (by the journal);
    /// false when the journal no longer holds them all (the caller reads the whole log).
    fn take_out_removed(&mut self, v: &View<'_>, upto: u64) -> Result<bool> {
        if upto - self.state.removals > JOURNAL_KEEP {
            return Ok(false);
        }
        for n in self.state.removals + 1..=upto {
            let Some(entry) = v.get(Table::META, &journal_key(n))? else { return Ok(false) };
            let (Some(key), Some(seq)) = (entry.get(..16), entry.get(16..24)) else {
                return Err(StoreError::BadArgument("a counter_log_removed entry has the wrong size".into()));
            };
            let (key, seq): (Key, u64) = (key.try_into().expect("16 bytes"), u64::from_le_bytes(seq.try_into().expect("8 bytes")));
            // A record of the name newer than the one removed was appended after the removal.
            if self.live.get(&key).is_some_and(|e| e.seq <= seq) {
                self.live.remove(&key);
            }
        }
        Ok(true)
    }
}
