//! The background syncer of `process` durability (see lifecycle.rs): a thread that fsyncs
//! the data file every interval.

use std::fs;
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

#[cfg(test)]
use std::sync::atomic::{AtomicU64, Ordering};

use crate::ffi::lmdb::Env;
use crate::ffi::os;

use super::error::{lmdb_failed, Result, StoreError};

#[cfg(test)]
pub(super) static SLOW_SYNC_MS: AtomicU64 = AtomicU64::new(0);

/// Puts the calling thread at the lowest priority a thread can set without privileges:
/// SCHED_BATCH (its wake-ups never preempt a running thread) at nice 19 (when threads
/// compete for a CPU it gets about 1.5% of it, enough for an fsync's CPU every interval, so
/// the interval still bounds what an OS crash can lose). Best effort: left as it is where
/// the system refuses.
fn yield_to_serving_threads() {
    os::lowest_priority_for_this_thread();
}

/// Background thread that, every interval until stopped or until the store it was started
/// for is closed, renews the pages cached ahead (`tick`: page_cache.rs `renew_ahead`) and
/// fsyncs the data file (fdatasync, which on Linux also writes back pages changed through
/// the writable map; what mdb_env_sync(force) does with MDB_NOSYNC). Sync failures are
/// retried on the next tick.
///
/// The fsync runs without holding `STORE`: under a write load it can take as long as the
/// disk needs for what changed since the last one (tens of milliseconds, more on a slow
/// disk), and a map growth (write mode) waiting behind it would stall every caller.
///
/// It runs at the lowest priority (`yield_to_serving_threads`): an fsync spends about half
/// a millisecond of CPU at a time in the kernel, queueing the pages for the disk, and at
/// normal priority it took that CPU from the serving thread it woke next to (the serving
/// thread waited, runnable, while the other CPU was idle: every fsync, a p99 outlier).
pub(super) struct Syncer {
    stop: Arc<(Mutex<bool>, Condvar)>,
    handle: JoinHandle<()>,
}

impl Syncer {
    /// Starts the thread for `env`'s data file. `tick` runs before each fsync; false (the
    /// store is closed) ends the thread.
    pub(super) fn spawn(env: &Env, interval: Duration, tick: impl Fn() -> bool + Send + 'static) -> Result<Syncer> {
        let file = data_file(env)?;
        let stop = Arc::new((Mutex::new(false), Condvar::new()));
        let signal = Arc::clone(&stop);
        let handle = std::thread::Builder::new()
            .name("keyward-lmdb-sync".into())
            .spawn(move || {
                yield_to_serving_threads();
                Syncer::run(&signal, &file, interval, tick)
            })
            .expect("spawn sync thread");
        Ok(Syncer { stop, handle })
    }

    fn run((lock, cv): &(Mutex<bool>, Condvar), file: &fs::File, interval: Duration, tick: impl Fn() -> bool) {
        loop {
            let deadline = Instant::now() + interval;
            let mut stopped = lock.lock().unwrap_or_else(PoisonError::into_inner);
            while !*stopped {
                let now = Instant::now();
                if now >= deadline {
                    break;
                }
                stopped = cv
                    .wait_timeout(stopped, deadline - now)
                    .unwrap_or_else(PoisonError::into_inner)
                    .0;
            }
            if *stopped {
                return;
            }
            drop(stopped);
            if !tick() {
                return;
            }
            #[cfg(test)]
            std::thread::sleep(Duration::from_millis(SLOW_SYNC_MS.load(Ordering::Relaxed)));
            let _ = file.sync_data();
        }
    }

    pub(super) fn stop(self) {
        let (lock, cv) = &*self.stop;
        *lock.lock().unwrap_or_else(PoisonError::into_inner) = true;
        cv.notify_all();
        let _ = self.handle.join();
    }
}

/// A file of its own on the environment's data file (a duplicate of LMDB's descriptor), for
/// the syncer: it stays open while the environment is closed or its map replaced.
fn data_file(env: &Env) -> Result<fs::File> {
    let fd = env.data_fd().map_err(lmdb_failed("mdb_env_get_fd"))?;
    // try_clone_to_owned duplicates it (F_DUPFD_CLOEXEC) into a descriptor the File owns.
    let own = fd
        .try_clone_to_owned()
        .map_err(|e| StoreError::Os(format!("cannot duplicate the data file descriptor: {e}")))?;
    Ok(fs::File::from(own))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::env::grow_map;
    use crate::store::lifecycle::{close, open, stats, OpenOptions};
    use crate::store::tests::Fixture;

    #[test]
    fn a_map_growth_does_not_wait_for_the_background_fsync() {
        let f = Fixture::new("slow-sync", 64 * 1024);
        close().unwrap();
        // Every background fsync now takes at least 600 ms, as on a disk behind on its writes.
        SLOW_SYNC_MS.store(600, Ordering::Relaxed);
        let opts = OpenOptions { sync_interval_ms: 5, initial_map_bytes: 64 * 1024, write_map: false, durable_commits: false };
        open(&f.dir, &opts).unwrap();
        std::thread::sleep(Duration::from_millis(100)); // the syncer is inside its fsync
        let before = stats().unwrap().map_bytes as usize;
        let started = Instant::now();
        grow_map(before).unwrap();
        let waited = started.elapsed();
        SLOW_SYNC_MS.store(0, Ordering::Relaxed);
        assert_eq!(stats().unwrap().map_bytes as usize, before * 2);
        close().unwrap();
        assert!(waited < Duration::from_millis(250), "the growth waited {waited:?} for the fsync");
    }

    /// nice and scheduling policy of this process's thread named `name` (/proc: fields 19 and
    /// 41 of its stat line, counted from the pid).
    fn thread_priority(name: &str) -> Option<(i64, i64)> {
        for task in fs::read_dir("/proc/self/task").ok()? {
            let path = task.ok()?.path();
            if fs::read_to_string(path.join("comm")).ok()?.trim() != name {
                continue;
            }
            let stat = fs::read_to_string(path.join("stat")).ok()?;
            // After "pid (comm) ", the fields from the state (field 3) on.
            let fields: Vec<&str> = stat[stat.rfind(')')? + 2..].split(' ').collect();
            return Some((fields[19 - 3].parse().ok()?, fields[41 - 3].parse().ok()?));
        }
        None
    }

    #[test]
    fn the_background_syncer_runs_at_the_lowest_priority() {
        let f = Fixture::new("syncer-priority", 64 * 1024);
        close().unwrap();
        open(&f.dir, &OpenOptions { sync_interval_ms: 5, initial_map_bytes: 64 * 1024, write_map: false, durable_commits: false }).unwrap();
        let mut seen = None;
        for _ in 0..100 {
            seen = thread_priority("keyward-lmdb-sy"); // comm keeps 15 bytes of the name
            if seen.is_some_and(|(nice, _)| nice == 19) {
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        close().unwrap();
        assert_eq!(seen, Some((19, i64::from(libc::SCHED_BATCH))), "(nice, policy) of the syncer");
    }
}
