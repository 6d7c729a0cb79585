//! What the rest of the crate calls: a counter's record (`get`), its change (`put`) or
//! removal (`remove`) in a write transaction, and the sweeper (`sweep`).

use crate::store::{self, StoreError, View};
use crate::window::RECORD_BYTES;

use super::gc::{collect, prune, PRUNE_SLOTS_PER_VISIT};
use super::hook::prepare;
use super::index::{lock, Digest, Entry};
use super::layout::{Key, Value, LOG};
use super::txn_log::{current, with_log};

type Result<T> = std::result::Result<T, StoreError>;

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
