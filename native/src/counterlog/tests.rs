//! The counter log through the real store: commits, aborts, garbage, the sweeper, pruning,
//! and other processes' appends and deletions (made behind this process's index).

use crate::store::tests::Fixture;
use crate::store::{self, StoreError};
use crate::window::{Window, RECORD_BYTES};

use super::counters::{get, note_time, put, sweep};
use super::gc::{GC_BATCH, PRUNE_SLOTS_PER_APPEND, VISITS_PER_APPEND};
use super::index::lock;
use super::layout::{seq_of, Key, Value, LIMITER_WINDOW, LOG};

type Result<T> = std::result::Result<T, StoreError>;

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
fn a_failed_transaction_nested_in_a_batch_leaves_the_batch_counters_as_they_were() {
    let _store = Fixture::new("counterlog-nested", 0);
    store::transaction(|| put(&key(1), &value(1))).unwrap();
    store::batch_begin().unwrap();
    put(&key(1), &value(2)).unwrap();
    store::transaction(|| put(&key(2), &value(7))).unwrap();
    let failed: Result<()> = store::transaction(|| {
        put(&key(1), &value(9))?;
        put(&key(3), &value(9))?;
        Err(StoreError::BadArgument("user error".into()))
    });
    assert!(failed.is_err());
    assert_eq!(store::view(|v| get(v, &key(1))).unwrap(), Some(value(2)));
    assert_eq!(store::view(|v| get(v, &key(3))).unwrap(), None);
    assert!(store::batch_commit().unwrap());
    assert_eq!(read(&key(1)), Some(value(2)));
    assert_eq!(read(&key(2)), Some(value(7)));
    assert_eq!(read(&key(3)), None);
    // The index agrees with the store: a later transaction reads the same.
    store::transaction(|| {
        assert_eq!(store::view(|v| get(v, &key(2)))?, Some(value(7)));
        assert_eq!(store::view(|v| get(v, &key(3)))?, None);
        Ok::<_, StoreError>(())
    })
    .unwrap();
}

#[test]
fn a_nested_transaction_that_first_uses_the_log_and_fails_leaves_it_idle() {
    let _store = Fixture::new("counterlog-nested-first", 0);
    store::batch_begin().unwrap();
    let failed: Result<()> = store::transaction(|| {
        put(&key(4), &value(4))?;
        Err(StoreError::BadArgument("user error".into()))
    });
    assert!(failed.is_err());
    assert!(store::batch_commit().unwrap());
    assert_eq!(read(&key(4)), None);
    store::transaction(|| put(&key(5), &value(5))).unwrap();
    assert_eq!(read(&key(5)), Some(value(5)));
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
