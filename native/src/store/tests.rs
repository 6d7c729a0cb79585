//! What the store's tests share, and other modules' tests use too: a store of its own per
//! test (`Fixture`), one test at a time, and short helpers.

use std::fs;
use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard, PoisonError};

use super::error::StoreError;
use super::lifecycle::{close, open, OpenOptions};
use super::table::Table;
use super::view::{get, range};
use super::write::put;
use super::write_txn::transaction;

// The store is process-wide, so tests that open it run one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

/// A store of its own in a temporary directory, open while the fixture lives (other
/// modules' tests use it too).
pub(crate) struct Fixture {
    pub(crate) dir: PathBuf,
    _serial: MutexGuard<'static, ()>,
}

impl Fixture {
    pub(crate) fn new(name: &str, initial_map_bytes: usize) -> Fixture {
        let serial = SERIAL.lock().unwrap_or_else(PoisonError::into_inner);
        let _ = close();
        let dir =
            std::env::temp_dir().join(format!("keyward-store-{}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let fixture = Fixture {
            dir,
            _serial: serial,
        };
        fixture.open(initial_map_bytes);
        fixture
    }

    pub(crate) fn open(&self, initial_map_bytes: usize) {
        let opts = OpenOptions {
            sync_interval_ms: 0,
            initial_map_bytes,
            write_map: false,
            durable_commits: false,
        };
        open(&self.dir, &opts).unwrap();
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = close();
        let _ = fs::remove_dir_all(&self.dir);
    }
}

pub(crate) fn t(name: &str) -> Table {
    Table::from_name(name.as_bytes()).unwrap()
}

pub(crate) fn get_vec(table: Table, key: &[u8]) -> Option<Vec<u8>> {
    get(table, key, |v| v.map(<[u8]>::to_vec)).unwrap()
}

pub(crate) fn put_one(table: Table, key: &[u8], value: &[u8]) {
    transaction(|| put(table, key, value)).unwrap();
}

pub(crate) fn collect(
    table: Table,
    start: &[u8],
    end: Option<&[u8]>,
    limit: usize,
) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut out = Vec::new();
    range(table, start, end, limit, |k, v| {
        out.push((k.to_vec(), v.to_vec()));
        Ok::<_, StoreError>(())
    })
    .unwrap();
    out
}
