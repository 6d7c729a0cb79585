//! The analytics threads' priority (docs/analytics.md, "What it costs the hot path"): the
//! analytics worker's thread and the threads of libuv's pool, where DuckDB writes the events
//! and runs queries, registered once (`govern`).
//!
//! A governor thread of its own (normal priority, so a starved analytics thread cannot hold
//! the decision up) keeps them at SCHED_IDLE — only CPU the serving threads leave — while
//! nothing is asked of analytics, and at normal priority while a query runs (`queries`) or
//! while events wait longer than RAISE_BEHIND_MS (`events::waiting_since`), until they wait
//! at most LOWER_BEHIND_MS again. Going back up from SCHED_IDLE needs a privilege (root,
//! CAP_SYS_NICE or an RLIMIT_NICE of 20): without one, nothing is lowered.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::events;
use crate::ffi::os;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// SCHED_IDLE.
    Idle,
    /// SCHED_OTHER at nice 0.
    Normal,
}

/// Events waiting this long take the threads to Normal…
pub const RAISE_BEHIND_MS: i64 = 1_000;
/// …until they wait at most this long.
pub const LOWER_BEHIND_MS: i64 = 500;
/// How often the governor looks.
const TICK: Duration = Duration::from_millis(100);

/// Sets thread `tid` of this process (0: the calling thread) to `level`; whether the system
/// took it. From Idle to Normal needs a privilege.
pub fn set(tid: i64, level: Level) -> bool {
    match level {
        Level::Idle => os::idle_priority(tid),
        Level::Normal => os::normal_priority(tid),
    }
}

/// Whether this process may take a thread back from Idle to Normal: tried on a thread of its own.
pub fn may_leave_idle() -> bool {
    std::thread::spawn(|| set(0, Level::Idle) && set(0, Level::Normal)).join().unwrap_or(false)
}

/// The level the threads should have: `current`, `queries` running, events waiting `behind` ms.
pub fn wanted(current: Level, queries: usize, behind: Option<i64>) -> Level {
    let behind = behind.unwrap_or(0);
    if queries > 0 || behind >= RAISE_BEHIND_MS {
        Level::Normal
    } else if behind <= LOWER_BEHIND_MS {
        Level::Idle
    } else {
        current
    }
}

struct Governed {
    tids: Vec<i64>,
    level: Level,
    /// Analytics queries running.
    queries: usize,
}

static GOVERNED: Mutex<Governed> = Mutex::new(Governed { tids: Vec::new(), level: Level::Normal, queries: 0 });
static STARTED: AtomicBool = AtomicBool::new(false);

fn governed() -> std::sync::MutexGuard<'static, Governed> {
    GOVERNED.lock().unwrap_or_else(|p| p.into_inner())
}

/// Hands thread `tid` to the governor, which starts with the first. False (and nothing done)
/// when this process may not take a thread back up from Idle.
pub fn govern(tid: i64) -> bool {
    if !STARTED.load(Ordering::Acquire) {
        if !may_leave_idle() {
            return false;
        }
        if !STARTED.swap(true, Ordering::AcqRel) {
            if std::thread::Builder::new().name("keyward-priority".into()).spawn(run).is_err() {
                STARTED.store(false, Ordering::Release);
                return false;
            }
            // Nothing is asked of analytics yet: the threads start at Idle, not a tick later.
            let mut g = governed();
            let level = wanted(g.level, g.queries, None);
            apply(&mut g, level);
        }
    }
    let mut g = governed();
    if !g.tids.contains(&tid) {
        set(tid, g.level);
        g.tids.push(tid);
    }
    true
}

/// A query starts (+1) or ends (-1). Starting one raises the threads at once.
pub fn queries(delta: i32) {
    let mut g = governed();
    g.queries = if delta > 0 { g.queries + 1 } else { g.queries.saturating_sub(1) };
    if STARTED.load(Ordering::Acquire) && g.queries > 0 {
        apply(&mut g, Level::Normal);
    }
}

/// Whether the governed threads are at Idle now (they start at Normal, until governed).
pub fn idle() -> bool {
    governed().level == Level::Idle
}

fn apply(g: &mut Governed, level: Level) {
    if g.level != level {
        // A thread that refuses (gone, or the privilege lost) is left as it is.
        for &tid in &g.tids {
            set(tid, level);
        }
        g.level = level;
    }
}

fn run() {
    loop {
        std::thread::sleep(TICK);
        let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64);
        let mut g = governed();
        let level = wanted(g.level, g.queries, events::waiting_since().map(|t| now - t));
        apply(&mut g, level);
    }
}

#[derive(Default)]
struct Arrivals {
    started: usize,
    /// The ids of the threads that ran a job, each once.
    ids: Vec<i64>,
}

/// The ids of a pool's threads: `spawn` hands a job to the pool, to run on one of its
/// threads, `count` times. Each job holds its thread until all `count` jobs have started (or
/// `wait` has passed), so that no thread takes two of them and a pool of `count` threads
/// has each one named. Fewer than `count` when the pool is smaller or some threads stayed busy.
pub fn pool_thread_ids<E>(count: usize, wait: Duration, spawn: impl Fn(Box<dyn FnOnce() + Send>) -> Result<(), E>) -> Result<Vec<i64>, E> {
    let shared = Arc::new((Mutex::new(Arrivals::default()), Condvar::new()));
    let deadline = Instant::now() + wait;
    for _ in 0..count {
        let shared = Arc::clone(&shared);
        spawn(Box::new(move || {
            let (lock, cv) = &*shared;
            let id = os::thread_id();
            let mut a = lock.lock().unwrap_or_else(|p| p.into_inner());
            a.started += 1;
            if !a.ids.contains(&id) {
                a.ids.push(id);
            }
            cv.notify_all();
            let _held = cv.wait_timeout_while(a, deadline.saturating_duration_since(Instant::now()), |a| a.started < count);
        }))?;
    }
    let (lock, cv) = &*shared;
    let a = lock.lock().unwrap_or_else(|p| p.into_inner());
    let (a, _) = cv.wait_timeout_while(a, deadline.saturating_duration_since(Instant::now()), |a| a.started < count).unwrap_or_else(|p| p.into_inner());
    Ok(a.ids.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    #[test]
    fn a_pool_names_each_of_its_threads_once() {
        let ids = pool_thread_ids(3, Duration::from_secs(5), |job| -> Result<(), ()> {
            std::thread::spawn(job);
            Ok(())
        });
        let mut ids = ids.unwrap();
        ids.dedup();
        assert_eq!(ids.len(), 3);
    }

    #[test]
    fn a_pool_smaller_than_asked_gives_up_after_the_wait() {
        // One thread runs the jobs one after another: the first waits out the deadline.
        let (tx, rx) = mpsc::channel::<Box<dyn FnOnce() + Send>>();
        let worker = std::thread::spawn(move || {
            while let Ok(job) = rx.recv() {
                job();
            }
        });
        let started = Instant::now();
        let ids = pool_thread_ids(2, Duration::from_millis(200), |job| tx.send(job).map_err(|_| ())).unwrap();
        assert_eq!(ids.len(), 1);
        assert!(started.elapsed() >= Duration::from_millis(200));
        drop(tx);
        worker.join().unwrap();
    }

    #[test]
    fn queries_and_a_backlog_raise_the_threads_and_a_caught_up_backlog_lowers_them() {
        use Level::{Idle, Normal};
        assert_eq!(wanted(Idle, 0, None), Idle);
        assert_eq!(wanted(Normal, 0, None), Idle);
        assert_eq!(wanted(Idle, 1, None), Normal, "a query runs at normal priority");
        assert_eq!(wanted(Idle, 0, Some(RAISE_BEHIND_MS)), Normal);
        assert_eq!(wanted(Normal, 0, Some(LOWER_BEHIND_MS + 1)), Normal, "between the thresholds: as it is");
        assert_eq!(wanted(Idle, 0, Some(LOWER_BEHIND_MS + 1)), Idle);
        assert_eq!(wanted(Normal, 0, Some(LOWER_BEHIND_MS)), Idle);
    }

    #[test]
    fn a_thread_is_set_by_its_id_from_another() {
        let (tx, rx) = mpsc::channel();
        let (done_tx, done_rx) = mpsc::channel::<()>();
        let t = std::thread::spawn(move || {
            tx.send(os::thread_id()).unwrap();
            done_rx.recv().unwrap();
        });
        let id = rx.recv().unwrap();
        assert!(set(id, Level::Idle));
        assert_eq!(os::policy_of(id), libc::SCHED_IDLE);
        // Back up needs a privilege; where this runs with one, it goes back to SCHED_OTHER.
        if may_leave_idle() {
            assert!(set(id, Level::Normal));
            assert_eq!(os::policy_of(id), libc::SCHED_OTHER);
        } else {
            assert!(!set(id, Level::Normal));
        }
        done_tx.send(()).unwrap();
        t.join().unwrap();
    }
}
