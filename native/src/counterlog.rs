//! The counters of the hot calls: rate-limit windows (limit.rs, and the key and identity
//! limits of verify.rs) and credit balances (credits.rs). They are kept in an append-only
//! log in LMDB and read through an index in memory.
//!
//! Why: counters change at random places (a random key's credits, a random identifier's
//! window). Kept in a B-tree and changed in place, each such change copied a random leaf
//! page (LMDB is copy-on-write), and every page written between two background fsyncs had
//! to be written back and write-protected again by the next one, which stalled the serving
//! thread (README, Durability and storage). Appended instead, the changes of a commit fill
//! the same few pages at the end of one table.
//!
//! Names: a counter is named by 16 bytes (`Key`): a tag for its kind, then 15 bytes of a
//! SHA-256 of what it counts for (`named`; a limiter window: limit.rs window_key).
//!
//! Layout: table `counter_log`; key = sequence number (u64 big-endian; the next is one
//! more than the highest this process has seen, so it also grows across processes), value =
//! the counter's name (16 bytes) ‖ its 32-byte record (window.rs or credits.rs). A counter
//! is the record of its name with the highest sequence number; older records of the name are
//! garbage.
//!
//! Index: per process, name → (sequence number, record) of every live counter. It is built
//! by reading the whole log when the store is opened and is kept equal to the committed
//! log:
//! - a write transaction keeps its appends and removals in its `TxnLog`, where its own
//!   later reads find them; they reach the index under the index lock, held across
//!   mdb_txn_commit, and only if the commit succeeded, so no thread reads a counter that was
//!   not committed, nor misses one that was;
//! - records another process appended are read in before the index is read (the log's last
//!   key, or the stored `LogState::high`, is past what the index has seen), looked for only
//!   when a transaction committed since the index last caught up (`Index::synced`, by LMDB
//!   transaction id), which with one process is never;
//! - a counter another process removed (`remove`: a key's credits) cannot be seen that way:
//!   each removal is counted in `LogState::removals` and journaled in META (the counter's
//!   name and the sequence number removed, the last `JOURNAL_KEEP` of them), and an index
//!   whose count is behind takes the journaled ones out (or, when the journal no longer
//!   reaches back far enough, reads the whole log again). Stale windows the sweeper deletes
//!   are not counted: another process keeping one reads it as nothing, as it would read no
//!   window.
//!
//! Sequence numbers are never given out twice: a transaction that deleted the log's last
//! record stores the highest number given out (`LogState::high`), since the log's last key
//! alone would hand that number out again, and another process, having seen it already,
//! would never read the record that took it.
//!
//! Garbage: the commits that append pay `VISITS_PER_APPEND` visits of records per append,
//! going on from where the last visit stopped (`gc_after`, back to the start after the end),
//! and delete the garbage among them. The visits are paid in bulk, once `GC_BATCH` appends
//! are owed (`gc_debt`): a visit deletes from pages of its own, and done at every commit it
//! added them to every commit's writes (at moderate load a commit carries one or two calls).
//! The sweeper (`sweep`) visits more and also deletes
//! windows that are stale (window.rs), taking them out of the index. Both delete in
//! sequence order, so they too touch few pages. With every counter changing at random, the
//! log holds about 1 + 1/VISITS_PER_APPEND records per live counter.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash, Hasher};
use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::hash;
use crate::slots::Slots;
use crate::store::{self, CommitHook, Committed, StoreError, Table, View};
use crate::window::{Window, RECORD_BYTES};

type Result<T> = std::result::Result<T, StoreError>;

/// The name of a counter: its kind's tag, then 15 bytes of a digest.
pub type Key = [u8; 16];

/// Tag of a `ratelimits.limit` window (limit.rs window_key).
pub const LIMITER_WINDOW: u8 = 0x01;
/// Tag of a key's or an identity's rate-limit window (verify.rs).
pub const KEY_WINDOW: u8 = 0x02;
/// Tag of a key's credits record (credits.rs); never stale.
pub const CREDITS: u8 = 0x03;

/// The name of the counter of kind `tag` for the concatenation of `parts`.
pub fn named(tag: u8, parts: &[&[u8]]) -> Key {
    let digest = hash::sha256_parts(parts);
    let mut key = [0u8; 16];
    key[0] = tag;
    key[1..].copy_from_slice(&digest[..15]);
    key
}

/// A counter's 32-byte record (window.rs or credits.rs).
type Value = [u8; RECORD_BYTES];

const LOG: Table = Table::COUNTER_LOG;

/// The sequence number of a log key (u64 big-endian).
fn seq_of(key: &[u8]) -> u64 {
    key.try_into().map_or(0, u64::from_be_bytes)
}

/// A log value: the counter's name and its record.
fn split(record: &[u8]) -> Result<(Key, Value)> {
    match (record.get(..16), record.get(16..)) {
        (Some(key), Some(value)) if value.len() == RECORD_BYTES => Ok((key.try_into().expect("16"), value.try_into().expect("32"))),
        _ => Err(StoreError::BadArgument("counter_log holds a record of the wrong size".into())),
    }
}

/// Table META: `LogState` (see the module comment); absent before the first transaction that
/// needed it, which reads as all zeros.
const LOG_STATE: &[u8] = b"counter_log_state";

/// What every process sharing the store must know of the log beyond its records.
#[derive(Clone, Copy, Default, PartialEq, Debug)]
struct LogState {
    /// The highest sequence number given out, when above the log's last key.
    high: u64,
    /// Live counters removed (`remove`) since the store was made.
    removals: u64,
}

impl LogState {
    fn read(v: &View<'_>) -> Result<LogState> {
        match v.get(Table::META, LOG_STATE)? {
            None => Ok(LogState::default()),
            Some(b) if b.len() == 16 => Ok(LogState {
                high: u64::from_le_bytes(b[..8].try_into().expect("8 bytes")),
                removals: u64::from_le_bytes(b[8..].try_into().expect("8 bytes")),
            }),
            Some(_) => Err(StoreError::BadArgument("meta.counter_log_state has the wrong size".into())),
        }
    }

    fn encode(self) -> [u8; 16] {
        let mut out = [0u8; 16];
        out[..8].copy_from_slice(&self.high.to_le_bytes());
        out[8..].copy_from_slice(&self.removals.to_le_bytes());
        out
    }
}

/// Table META: removal number n (u64 big-endian) after this prefix → the counter's name ‖ the
/// sequence number removed (u64 little-endian). Only the last `JOURNAL_KEEP` are kept.
const JOURNAL_PREFIX: &[u8] = b"counter_log_removed/";
const JOURNAL_KEEP: u64 = 4096;

fn journal_key(n: u64) -> [u8; JOURNAL_PREFIX.len() + 8] {
    let mut key = [0u8; JOURNAL_PREFIX.len() + 8];
    key[..JOURNAL_PREFIX.len()].copy_from_slice(JOURNAL_PREFIX);
    key[JOURNAL_PREFIX.len()..].copy_from_slice(&n.to_be_bytes());
    key
}

#[derive(Clone, Copy, Default)]
struct Entry {
    seq: u64,
    value: Value,
}

/// Names are SHA-256 digests after the tag: eight of their bytes are a hash already. The
/// tables hash a name by its last eight bytes (slots.rs, and `TakeU64` for a transaction's
/// changes); the shard is chosen by another byte (`shard_of`).
#[derive(Clone, Copy, PartialEq, Eq)]
struct Digest(Key);

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
struct TakeU64(u64);

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

type Map<V> = HashMap<Digest, V, BuildHasherDefault<TakeU64>>;

/// The live counters, in `SHARDS` tables (slots.rs) by a byte of the name (`shard_of`): a
/// table doubles (and moves every entry) when it fills, which for one table of a million
/// counters stalled the serving thread for a quarter of a second; a shard moves a 256th of
/// that.
struct Live(Vec<Slots<Entry>>);

const SHARDS: usize = 256;

impl Live {
    fn shard_mut(&mut self, key: &Key) -> &mut Slots<Entry> {
        if self.0.is_empty() {
            self.0 = (0..SHARDS).map(|_| Slots::default()).collect();
        }
        &mut self.0[shard_of(key)]
    }

    fn get(&self, key: &Key) -> Option<&Entry> {
        self.0.get(shard_of(key)).and_then(|t| t.get(key))
    }

    /// Slots of every shard: what one round of `stale_windows` looks at.
    fn slots(&self) -> usize {
        self.0.iter().map(Slots::capacity).sum()
    }

    /// Starts reading where `get(key)` will look (slots.rs).
    fn prefetch(&self, key: &Key) {
        if let Some(t) = self.0.get(shard_of(key)) {
            t.prefetch(key);
        }
    }

    fn insert(&mut self, key: &Key, entry: Entry) {
        self.shard_mut(key).insert(*key, entry);
    }

    /// Keeps `entry` unless the counter has a newer one.
    fn insert_newer(&mut self, key: &Key, entry: Entry) {
        if self.get(key).is_none_or(|current| current.seq <= entry.seq) {
            self.insert(key, entry);
        }
    }

    fn remove(&mut self, key: &Key) {
        if let Some(t) = self.0.get_mut(shard_of(key)) {
            t.remove(key);
        }
    }

    /// The windows stale at `now_ms` among the next `budget` slots from `at` (shard, slot),
    /// into `out`; `at` moves on (back to the start after the last shard).
    fn stale_windows(&self, now_ms: i64, at: &mut (usize, usize), budget: usize, out: &mut Vec<Key>) {
        let mut seen = Vec::new();
        let mut left = budget;
        while left > 0 && !self.0.is_empty() {
            let (shard, slot) = *at;
            let table = &self.0[shard % SHARDS];
            seen.clear();
            let (next, looked) = table.scan(slot, left, &mut seen);
            // An empty shard (or its end) still costs a little, so a call always ends.
            left = left.saturating_sub(looked.max(1));
            out.extend(seen.iter().filter(|(k, e)| k[0] != CREDITS && Window::decode(&e.value).is_none_or(|w| w.is_stale(now_ms))).map(|(k, _)| *k));
            *at = if next == 0 { ((shard + 1) % SHARDS, 0) } else { (shard, next) };
        }
    }
}

struct Index {
    /// The store generation it was built for (0: not built).
    generation: u64,
    /// The highest sequence number read or appended.
    high: u64,
    /// The index holds everything committed up to this transaction id (`View::snapshot_id`;
    /// 0: not known), and `state` is the `LogState` stored then: the removals it has taken
    /// out are `state.removals`.
    synced: u64,
    state: LogState,
    /// Garbage visits go on after this sequence number.
    gc_after: u64,
    /// Committed appends whose garbage visits are not paid yet (fewer than `GC_BATCH`).
    gc_debt: usize,
    /// Where `prune` goes on in `live` (shard, slot).
    prune_at: (usize, usize),
    /// Index slots the commits here still `prune` (see before_commit): set to two rounds of
    /// the index whenever records another process appended are read in, so the commits prune
    /// while that process writes and for two rounds after its last append, then leave it to
    /// the sweeper (a store seeded once by another process must not pay for it for good).
    foreign_prune: usize,
    live: Live,
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

fn lock() -> MutexGuard<'static, Index> {
    INDEX.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Index {
    /// Reads the log into the index when it was built for another open of the store or
    /// another process removed counters since, and the records appended since it last looked
    /// (by another process) otherwise. Returns the stored `LogState` `v` sees.
    fn refresh(&mut self, v: &View<'_>) -> Result<LogState> {
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

/// What one write transaction did to the log.
struct TxnLog {
    /// The index was read in for this transaction (`prepare`), setting the fields below.
    ready: bool,
    generation: u64,
    /// The id this transaction commits as (`View::snapshot_id` + 1).
    txn_id: u64,
    /// The first sequence number of this transaction's appends.
    first_seq: u64,
    next_seq: u64,
    gc_after: u64,
    /// The index's `gc_debt` when the transaction began, then after `before_commit`.
    gc_debt: usize,
    appended: usize,
    /// The stored `LogState` when the transaction began, then as `before_commit` leaves it.
    state: LogState,
    /// The highest sequence number it deleted (garbage, a stale window or a removed counter), 0 for none.
    deleted_high: u64,
    /// The live counters it removed (`remove`), with the sequence number each had.
    removed: Vec<(Key, u64)>,
    /// Per changed key, its entry after this transaction (None: removed).
    changes: Map<Option<Entry>>,
    /// The latest time a hot call of this transaction decided at (`note_time`; 0: none).
    /// The garbage visits paid before its commit delete the windows stale at that time too,
    /// so the log keeps up with new identifiers however fast they come (see `before_commit`).
    now_ms: i64,
}

impl TxnLog {
    /// The log of no transaction.
    const IDLE: TxnLog = TxnLog {
        ready: false,
        generation: 0,
        txn_id: 0,
        first_seq: 0,
        next_seq: 0,
        gc_after: 0,
        gc_debt: 0,
        appended: 0,
        state: LogState { high: 0, removals: 0 },
        deleted_high: 0,
        removed: Vec::new(),
        changes: HashMap::with_hasher(BuildHasherDefault::new()),
        now_ms: 0,
    };

    fn changed(&self, key: &Key) -> Option<Option<Entry>> {
        if self.changes.is_empty() { None } else { self.changes.get(&Digest(*key)).copied() }
    }
}

/// The largest changes table a thread keeps between transactions.
const MAX_SPARE_CHANGES: usize = 4096;

thread_local! {
    /// This thread's `TxnLog`: ready from `prepare` until its transaction ends, when the hook
    /// (`commit`, `aborted`) leaves it idle. So it is ready only inside the transaction that
    /// readied it, and idle between transactions.
    static TXN_LOG: RefCell<TxnLog> = const { RefCell::new(TxnLog::IDLE) };
    /// The `changes` table of this thread's last committed transaction, emptied, for the next
    /// one: a turn's batch changes a hundred or more counters, and a table grown anew each
    /// time (allocated again at every doubling) cost more than the changes themselves.
    static SPARE_CHANGES: Cell<Map<Option<Entry>>> = Cell::new(Map::default());
}

/// Runs `f` with this thread's `TxnLog`. `f` must not call back into the log.
fn with_log<R>(f: impl FnOnce(&mut TxnLog) -> R) -> R {
    TXN_LOG.with(|l| f(&mut l.borrow_mut()))
}

/// Takes this thread's `TxnLog`, leaving it idle (the transaction ended).
fn take_log() -> TxnLog {
    TXN_LOG.with(|l| std::mem::replace(&mut *l.borrow_mut(), TxnLog::IDLE))
}

/// The entry of the counter `key` as this thread sees it: changed by its write transaction,
/// else as committed (`index`).
fn current(index: &Index, key: &Key) -> Option<Entry> {
    match with_log(|l| l.changed(key)) {
        Some(changed) => changed,
        None => index.live.get(key).copied(),
    }
}

const VISITS_PER_APPEND: usize = 3;
/// Appends owed their garbage visits before a commit pays them (see the module comment).
const GC_BATCH: usize = 64;
/// The largest garbage-visit buffer a thread keeps between transactions.
const MAX_SPARE_VISITS: usize = 4096;

thread_local! {
    /// The garbage visits' buffer, kept for the same reason as the spare changes table
    /// (txn_log.rs `SPARE_CHANGES`).
    static SPARE_VISITED: Cell<Vec<(u64, Key, Value)>> = const { Cell::new(Vec::new()) };
}

/// Visits up to `max` records after the transaction's `gc_after` (from the start after the
/// end) and deletes the garbage among them, and with `now_ms` the stale windows too.
/// Returns how many it deleted and whether it reached the end.
fn collect(max: usize, now_ms: Option<i64>) -> Result<(usize, bool)> {
    let after = with_log(|l| l.gc_after);
    let start = if after == 0 { Vec::new() } else { (after + 1).to_be_bytes().to_vec() };
    let mut visited = SPARE_VISITED.take();
    visited.clear();
    store::range(LOG, &start, None, max, |k, record| {
        let (key, value) = split(record)?;
        visited.push((seq_of(k), key, value));
        Ok::<_, StoreError>(())
    })?;
    let mut deleted = 0;
    let mut deleted_high = 0;
    let index = lock();
    // The index lines of all of them are read at once rather than one miss after another.
    for (_, key, _) in &visited {
        index.live.prefetch(key);
    }
    for (seq, key, value) in &visited {
        let live = current(&index, key).is_some_and(|e| e.seq == *seq);
        let window = key[0] != CREDITS;
        let stale = window && live && now_ms.is_some_and(|now| Window::decode(value).is_none_or(|w| w.is_stale(now)));
        if live && !stale {
            continue;
        }
        store::del_counter(LOG, &seq.to_be_bytes())?;
        deleted += 1;
        deleted_high = *seq;
        if stale {
            with_log(|l| l.changes.insert(Digest(*key), None));
        }
    }
    let at_end = visited.len() < max;
    let next = if at_end { 0 } else { visited.last().map_or(0, |v| v.0) };
    with_log(|l| {
        l.gc_after = next;
        l.deleted_high = l.deleted_high.max(deleted_high);
    });
    // A sweep's visits (many thousands) are not kept: only a batch's.
    if visited.capacity() <= MAX_SPARE_VISITS {
        SPARE_VISITED.set(visited);
    }
    Ok((deleted, at_end))
}

/// Index slots `prune` looks at per record the sweep visits.
const PRUNE_SLOTS_PER_VISIT: usize = 8;
/// Index slots a commit's `prune` looks at per record appended (while `Index::foreign_prune` lasts).
const PRUNE_SLOTS_PER_APPEND: usize = 16;

/// Takes the windows stale at `now_ms` out of this process's index, looking at `budget` slots
/// from where it last stopped. A stale window reads as none, so this changes no answer; it
/// is for the windows another process deleted: their records are gone, so this process's
/// visits never meet them, and they would otherwise stay in its index for good (two servers
/// on one store under new identifiers each kept the windows the other deleted). A stale
/// window whose record is still in the log is then garbage to the next visit that meets it.
fn prune(now_ms: i64, budget: usize) {
    prune_locked(&mut lock(), now_ms, budget);
}

fn prune_locked(index: &mut Index, now_ms: i64, budget: usize) {
    let mut at = index.prune_at;
    let mut stale = Vec::new();
    index.live.stale_windows(now_ms, &mut at, budget, &mut stale);
    for key in &stale {
        index.live.remove(key);
    }
    index.prune_at = at;
}

/// Stores the `LogState` when this transaction changed it, and journals its removals: it
/// removed live counters, or its deletions left the log's last key below the highest
/// sequence number given out.
fn save_state() -> Result<()> {
    let (state, deleted_high, appended, removed, given_out) = with_log(|l| (l.state, l.deleted_high, l.appended, std::mem::take(&mut l.removed), l.next_seq.saturating_sub(1)));
    // Nothing deleted, or the record this transaction appended last (numbered `given_out`)
    // is still there: the log's last key is `given_out` or above.
    if removed.is_empty() && (deleted_high == 0 || (appended > 0 && deleted_high < given_out)) {
        return Ok(());
    }
    let last = store::view(|v| Ok::<_, StoreError>(v.last_key(LOG)?.map_or(0, seq_of)))?;
    let high = if last.max(state.high) < given_out { given_out } else { state.high };
    let next = LogState { high, removals: state.removals + removed.len() as u64 };
    for (n, (key, seq)) in (state.removals + 1..).zip(&removed) {
        let mut entry = [0u8; 24];
        entry[..16].copy_from_slice(key);
        entry[16..].copy_from_slice(&seq.to_le_bytes());
        store::put_counter(Table::META, &journal_key(n), &entry)?;
        if n > JOURNAL_KEEP {
            store::del_counter(Table::META, &journal_key(n - JOURNAL_KEEP))?;
        }
    }
    if next != state {
        store::put_counter(Table::META, LOG_STATE, &next.encode())?;
        with_log(|l| l.state = next);
    }
    Ok(())
}

/// What the store calls at the ends of every write transaction (registered by `prepare`).
static HOOK: CommitHook = CommitHook { before_commit, commit, aborted };

/// Readies this thread's write transaction for the log: the index is current and the
/// transaction knows its next sequence number. Once per transaction.
///
/// The log is ready only inside the transaction that readied it (txn_log.rs), so a ready log
/// is this transaction's; and the hook is registered before the first log is readied, so
/// that the end of every transaction that used the log goes through it.
fn prepare(v: &View<'_>) -> Result<()> {
    if with_log(|l| l.ready) {
        return Ok(());
    }
    if !store::in_transaction() {
        return Err(StoreError::NotInTxn);
    }
    store::set_commit_hook(&HOOK);
    let mut index = lock();
    let state = index.refresh(v)?;
    with_log(|l| {
        let next_seq = index.high + 1;
        let changes = SPARE_CHANGES.take();
        *l = TxnLog { ready: true, generation: index.generation, txn_id: v.snapshot_id() + 1, first_seq: next_seq, next_seq, gc_after: index.gc_after, gc_debt: index.gc_debt, state, changes, ..TxnLog::IDLE };
    });
    Ok(())
}

/// Before a write transaction commits (the hook): the garbage visits owed for its appends
/// and the earlier ones, once `GC_BATCH` are owed; then the `LogState` it changed.
///
/// When hot calls told it the time, the visits delete the windows stale then as well: each
/// append pays `VISITS_PER_APPEND` visits, so the visits go round the log at least three
/// times as fast as it grows, and a window nobody calls again (a new identifier per call,
/// a deleted key's window) is deleted within about one round after its last bucket ended.
/// The log then holds at most about 3 × duration × (new windows per second) records,
/// where the sweeper's fixed pace alone let it grow without bound under such load.
fn before_commit() -> Result<()> {
    let (owed, now_ms) = with_log(|l| (if l.ready && l.appended > 0 { l.gc_debt + l.appended } else { 0 }, l.now_ms));
    if owed > 0 {
        let pay = owed >= GC_BATCH;
        if pay {
            collect(owed * VISITS_PER_APPEND, (now_ms > 0).then_some(now_ms))?;
            // With another process on the store, the windows it deletes stay in this index
            // until pruned; pruned at the pace of this process's appends, the index keeps up
            // (each append adds at most one entry, about 1.4 slots).
            if now_ms > 0 {
                let budget = owed * PRUNE_SLOTS_PER_APPEND;
                let mut index = lock();
                if index.foreign_prune > 0 {
                    index.foreign_prune = index.foreign_prune.saturating_sub(budget);
                    prune_locked(&mut index, now_ms, budget);
                }
            }
        }
        with_log(|l| l.gc_debt = if pay { 0 } else { owed });
    }
    save_state()
}

/// Commits a write transaction with `commit` (mdb_txn_commit) and, when it succeeded,
/// applies what the transaction did to the log to the index. The index lock is held across
/// the commit (see the module comment of counterlog/).
fn commit(commit: &mut dyn FnMut() -> Committed) -> Committed {
    let log = take_log();
    if !log.ready {
        return commit();
    }
    let mut index = lock();
    // A transaction that wrote nothing commits no new id (LMDB), so it says nothing of `synced`.
    let wrote = !log.changes.is_empty() || log.deleted_high > 0;
    let committed = commit();
    if committed.is_ok() && index.generation == log.generation {
        let mut changes = log.changes;
        for (key, change) in changes.drain() {
            match change {
                Some(entry) => {
                    index.live.insert(&key.0, entry);
                }
                None => {
                    index.live.remove(&key.0);
                }
            }
        }
        index.high = index.high.max(log.next_seq - 1);
        // Prepared under the writer lock, the index held everything up to this commit.
        if wrote {
            (index.synced, index.state) = (log.txn_id, log.state);
        }
        index.gc_after = log.gc_after;
        index.gc_debt = log.gc_debt;
        // One of a large management transaction is not kept: draining walks its whole table.
        if changes.capacity() <= MAX_SPARE_CHANGES {
            SPARE_CHANGES.set(changes);
        }
    }
    committed
}

/// The transaction ended without a commit: what it did to the log is forgotten.
fn aborted() {
    drop(take_log());
}

/// Reads the log into the index now (at open, so the first call after it does not).
pub fn load() -> Result<()> {
    store::view(|v| lock().refresh(v).map(|_| ()))
}

/// Starts reading where `get` will look in the index for each of `keys` (a hint; no effect
/// on what any call returns), so that the reads of several counters overlap.
pub fn prefetch<'k>(keys: impl IntoIterator<Item = &'k Key>) {
    let index = lock();
    keys.into_iter().for_each(|key| index.live.prefetch(key));
}

/// The record of the counter `key` as `v` sees it (None: there is none).
pub fn get(v: &View<'_>, key: &Key) -> Result<Option<Value>> {
    if store::in_transaction() {
        prepare(v)?;
        return Ok(current(&lock(), key).map(|e| e.value));
    }
    let mut index = lock();
    index.refresh(v)?;
    Ok(index.live.get(key).map(|e| e.value))
}

/// Stores `value` as the counter `key`. Only inside a write transaction. A counter this
/// transaction already appended is rewritten where it is (its page is this transaction's
/// own copy already), so a hot counter adds one record per commit, not one per call.
pub fn put(key: &Key, value: &Value) -> Result<()> {
    store::view(prepare)?;
    let (seq, again) = with_log(|l| match l.changed(key) {
        Some(Some(e)) if e.seq >= l.first_seq => (e.seq, true),
        _ => {
            l.next_seq += 1;
            (l.next_seq - 1, false)
        }
    });
    let mut record = [0u8; 16 + RECORD_BYTES];
    record[..16].copy_from_slice(key);
    record[16..].copy_from_slice(value);
    if again {
        store::put_counter(LOG, &seq.to_be_bytes(), &record)?;
    } else {
        store::append_counter(LOG, &seq.to_be_bytes(), &record)?;
    }
    with_log(|l| {
        l.appended += usize::from(!again);
        l.changes.insert(Digest(*key), Some(Entry { seq, value: *value }));
    });
    Ok(())
}

/// Removes the counter `key`; true if there was one. Only inside a write transaction.
pub fn remove(key: &Key) -> Result<bool> {
    store::view(prepare)?;
    let Some(Entry { seq, .. }) = current(&lock(), key) else { return Ok(false) };
    store::del_counter(LOG, &seq.to_be_bytes())?;
    with_log(|l| {
        l.changes.insert(Digest(*key), None);
        l.deleted_high = l.deleted_high.max(seq);
        l.removed.push((*key, seq));
    });
    Ok(true)
}

/// The hot calls of a write transaction tell it the time they decided at (after their puts).
pub fn note_time(now_ms: i64) {
    with_log(|l| {
        // Only a transaction that uses the log keeps the time (`prepare` readies it).
        if l.ready {
            l.now_ms = l.now_ms.max(now_ms);
        }
    });
}

/// The sweeper: visits up to `max` records and deletes garbage and stale windows (one write
/// transaction), then `prune`s the index. Returns how many records it deleted and whether
/// the visit reached the end of the log.
pub fn sweep(now_ms: i64, max: usize) -> Result<(usize, bool)> {
    let swept = store::transaction(|| {
        store::view(prepare)?;
        collect(max, Some(now_ms))
    })?;
    prune(now_ms, max.saturating_mul(PRUNE_SLOTS_PER_VISIT));
    Ok(swept)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::tests::Fixture;

    fn key(i: u8) -> Key {
        let mut k = [0u8; 16];
        k[0] = 1;
        k[8] = i;
        k[15] = i;
        k
    }

    fn value(n: u8) -> Value {
        [n; RECORD_BYTES]
    }

    fn read(k: &Key) -> Option<Value> {
        store::view(|v| get(v, k)).unwrap()
    }

    fn records() -> usize {
        let mut n = 0;
        store::range(LOG, &[], None, usize::MAX, |_, _| {
            n += 1;
            Ok::<_, StoreError>(())
        })
        .unwrap();
        n
    }

    #[test]
    fn a_transaction_reads_its_own_writes_and_others_see_them_only_once_committed() {
        let _store = Fixture::new("counterlog-commit", 0);
        store::transaction(|| put(&key(1), &value(1))).unwrap();
        store::transaction(|| {
            put(&key(1), &value(2))?;
            assert_eq!(store::view(|v| get(v, &key(1)))?, Some(value(2)));
            // Another thread reads the committed window, not this transaction's.
            let elsewhere = std::thread::spawn(|| read(&key(1))).join().unwrap();
            assert_eq!(elsewhere, Some(value(1)));
            Ok::<_, StoreError>(())
        })
        .unwrap();
        assert_eq!(read(&key(1)), Some(value(2)));
    }

    #[test]
    fn an_aborted_transaction_changes_no_window() {
        let _store = Fixture::new("counterlog-abort", 0);
        store::transaction(|| put(&key(1), &value(1))).unwrap();
        let before = records();
        let failed: Result<()> = store::transaction(|| {
            put(&key(1), &value(9))?;
            put(&key(2), &value(9))?;
            Err(StoreError::BadArgument("no".into()))
        });
        assert!(failed.is_err());
        assert_eq!(read(&key(1)), Some(value(1)));
        assert_eq!(read(&key(2)), None);
        assert_eq!(records(), before);
        // The next transaction appends after what is committed.
        store::transaction(|| put(&key(2), &value(3))).unwrap();
        assert_eq!(read(&key(2)), Some(value(3)));
    }

    #[test]
    fn one_record_per_window_per_commit_and_superseded_records_are_deleted() {
        let _store = Fixture::new("counterlog-garbage", 0);
        store::transaction(|| (0..200).try_for_each(|n| put(&key(7), &value(n as u8)))).unwrap();
        assert_eq!(records(), 1);
        assert_eq!(read(&key(7)), Some(value(199)));
        for n in 0..2_000u32 {
            store::transaction(|| put(&key((n % 20) as u8), &value(n as u8))).unwrap();
        }
        // 20 live windows (key 7 among them), and of the 2,000 superseded records only those
        // the last visits have not reached yet, and those appended since visits were last paid.
        let left = records();
        assert!((21..=21 + 2 * 20 / VISITS_PER_APPEND + 20 + GC_BATCH).contains(&left), "{left} records");
        for n in 1_980..2_000u32 {
            assert_eq!(read(&key((n % 20) as u8)), Some(value(n as u8)));
        }
    }

    /// The name of window `n` (more of them than `key` has).
    fn wide_key(n: u32) -> Key {
        let mut k = [0u8; 16];
        k[0] = LIMITER_WINDOW;
        k[1..5].copy_from_slice(&n.to_be_bytes());
        k
    }

    #[test]
    fn commits_that_say_the_time_delete_stale_windows_so_new_identifiers_do_not_grow_the_log() {
        let _store = Fixture::new("counterlog-stale-in-commits", 0);
        // A new 1 s window per commit, 100 commits a (simulated) second, no sweep: a window
        // is stale 1–2 s after it was made, so about 200 are live at any time.
        let commit_all = |told: bool, from: u32| {
            for n in from..from + 5_000 {
                let now = i64::from(n) * 10;
                let w = Window { duration_ms: 1_000, seq: now / 1_000, current: 1, previous: 0 }.encode();
                store::transaction(|| {
                    put(&wide_key(n), &w)?;
                    if told {
                        note_time(now);
                    }
                    Ok::<_, StoreError>(())
                })
                .unwrap();
            }
        };
        commit_all(false, 0);
        assert_eq!(records(), 5_000, "without the time, the commits' visits delete no window");
        commit_all(true, 5_000);
        let left = records();
        // At most about 3 × duration × rate (300) live or not yet visited, plus visits owed.
        assert!(left <= 300 + 200 + GC_BATCH, "{left} records");
        assert_eq!(read(&wide_key(9_999)).map(|w| Window::decode(&w).is_some()), Some(true));
        assert_eq!(read(&wide_key(5_000)), None);
    }

    /// Deletes every record of the log as another process would: this process's index is not told.
    fn delete_behind_the_index() {
        let mut seqs = Vec::new();
        store::range(LOG, &[], None, usize::MAX, |k, _| {
            seqs.push(k.to_vec());
            Ok::<_, StoreError>(())
        })
        .unwrap();
        store::transaction(|| seqs.iter().try_for_each(|k| store::del_counter(LOG, k).map(|_| ()))).unwrap();
    }

    #[test]
    fn the_sweep_takes_windows_deleted_behind_this_index_out_of_it() {
        let _store = Fixture::new("counterlog-prune", 0);
        let stale = Window { duration_ms: 1_000, seq: 5, current: 1, previous: 0 }.encode();
        let fresh = Window { duration_ms: 1_000, seq: 10, current: 1, previous: 0 }.encode();
        store::transaction(|| {
            put(&wide_key(1), &stale)?;
            put(&wide_key(2), &fresh)?;
            put(&wide_key(3), &stale)
        })
        .unwrap();
        delete_behind_the_index();
        assert_eq!(records(), 0);
        assert!(lock().live.get(&wide_key(1)).is_some(), "the index still has the deleted window");
        let (deleted, _) = sweep(10_500, 1_000).unwrap();
        assert_eq!(deleted, 0, "no record left to delete");
        assert!(lock().live.get(&wide_key(1)).is_none());
        assert!(lock().live.get(&wide_key(3)).is_none());
        // A window that still counts is left alone, whoever deleted its record.
        assert_eq!(lock().live.get(&wide_key(2)).map(|e| e.value), Some(fresh));
    }

    #[test]
    fn with_another_process_on_the_store_commits_prune_the_index_as_they_append() {
        let _store = Fixture::new("counterlog-prune-commits", 0);
        let stale = Window { duration_ms: 1_000, seq: 5, current: 1, previous: 0 }.encode();
        store::transaction(|| (0..100).try_for_each(|n| put(&wide_key(n), &stale))).unwrap();
        delete_behind_the_index();
        let in_index = || (0..100).filter(|&n| lock().live.get(&wide_key(n)).is_some()).count();
        let append = |from: u32| {
            for n in from..from + GC_BATCH as u32 {
                let w = Window { duration_ms: 1_000, seq: 10, current: 1, previous: 0 }.encode();
                store::transaction(|| {
                    put(&wide_key(n), &w)?;
                    note_time(10_500);
                    Ok::<_, StoreError>(())
                })
                .unwrap();
            }
        };
        // One process: its commits leave the index alone (its own deletions keep it right).
        append(1_000);
        assert_eq!(in_index(), 100);
        // Once another process is seen to append, they prune it as they go.
        append_behind_the_index(5_000);
        append(2_000);
        assert_eq!(in_index(), 0);
        // Two rounds of the index after its last append, they stop: the sweeper's pruning is
        // left to catch what it deletes later, and a store seeded once by another process
        // does not cost every commit for good.
        let rounds = 2 * lock().live.slots();
        let payments = rounds.div_ceil(GC_BATCH * PRUNE_SLOTS_PER_APPEND) as u32;
        for p in 0..payments {
            append(10_000 + p * GC_BATCH as u32);
        }
        assert_eq!(lock().foreign_prune, 0);
        store::transaction(|| (200..300).try_for_each(|n| put(&wide_key(n), &stale))).unwrap();
        delete_behind_the_index();
        append(20_000);
        assert_eq!((200..300).filter(|&n| lock().live.get(&wide_key(n)).is_some()).count(), 100);
        sweep(10_500, 1_000).unwrap();
        assert_eq!((200..300).filter(|&n| lock().live.get(&wide_key(n)).is_some()).count(), 0, "the sweep still prunes");
    }

    /// Appends a record of the counter `wide_key(n)` as another process would: this process's
    /// index is not told, and reads it in at its next look.
    fn append_behind_the_index(n: u32) {
        let mut last = 0;
        store::range(LOG, &[], None, usize::MAX, |k, _| {
            last = seq_of(k);
            Ok::<_, StoreError>(())
        })
        .unwrap();
        let mut record = [0u8; 16 + RECORD_BYTES];
        record[..16].copy_from_slice(&wide_key(n));
        record[16..].copy_from_slice(&Window { duration_ms: 1_000, seq: 10, current: 1, previous: 0 }.encode());
        store::transaction(|| store::append_counter(LOG, &(last.max(lock().high) + 1).to_be_bytes(), &record)).unwrap();
    }

    #[test]
    fn sweep_deletes_stale_windows_and_the_index_survives_a_reopen() {
        let store_ = Fixture::new("counterlog-sweep", 0);
        let fresh = Window { duration_ms: 1_000, seq: 10, current: 1, previous: 0 }.encode();
        let stale = Window { duration_ms: 1_000, seq: 5, current: 1, previous: 0 }.encode();
        store::transaction(|| {
            put(&key(1), &fresh)?;
            put(&key(2), &stale)
        })
        .unwrap();
        let (mut deleted, mut ends) = (0, 0);
        while ends < 2 {
            let (n, at_end) = sweep(10_500, 1).unwrap();
            deleted += n;
            ends += usize::from(at_end);
        }
        assert_eq!(deleted, 1);
        assert_eq!(read(&key(2)), None);
        store::close().unwrap();
        store_.open(0);
        assert_eq!(read(&key(1)), Some(fresh));
        assert_eq!(read(&key(2)), None);
        store::transaction(|| put(&key(3), &fresh)).unwrap();
        assert_eq!(records(), 2);
    }
}
