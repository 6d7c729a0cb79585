//! The LMDB environment, its named tables and transactions, as plain Rust.
//!
//! One job per module; the contracts are on them:
//! - `table`: the table list; `error`: what calls fail with;
//! - `env`: the process-wide slot of the open environment, its guards, the map size;
//! - `lifecycle`: open and close, durability, `stats` and `sync`;
//! - `page_cache`: the data file kept in the page cache as single pages, `warm`;
//! - `syncer`: the background fsync thread;
//! - `read_txn`: the transaction a read goes through (kept per thread between reads);
//! - `write_txn`: this thread's write transaction, `transaction` and its re-runs;
//! - `dry_run`: a write transaction run to collect its writes, never committed;
//! - `batch`: group commit of the hot calls;
//! - `hook`: what another module does at the ends of a write transaction (the counter log);
//! - `view`: reads (a consistent `View`, `get`, ranges); `write`: puts and deletes;
//! - `epoch`: the records epoch.
//!
//! The store calls no other module of the crate but `ffi`: their work at commit time goes
//! through the commit hook.

mod batch;
mod dry_run;
mod env;
mod epoch;
mod error;
mod hook;
mod lifecycle;
mod page_cache;
mod pending;
mod read_txn;
mod syncer;
mod table;
mod view;
mod write;
mod write_txn;

#[cfg(test)]
pub(crate) mod tests;

pub use batch::{batch_abort, batch_begin, batch_commit, in_batch};
pub use dry_run::{dry_run, encode as encode_dry_run, note as note_written, note_read};
pub use env::{commit_mark, last_generation};
pub use epoch::{note_records_change, records_epoch, records_mark, uncommitted_record_change};
pub use error::StoreError;
pub use hook::{set_commit_hook, CommitHook, Committed};
pub use lifecycle::{backup, close, open, stats, sync, OpenOptions};
pub use page_cache::{open_elsewhere, warm};
pub use pending::{note_uncommitted_read, take_uncommitted_read};
pub use table::Table;
pub use view::{get, range, view, View, MAX_KEY_BYTES};
pub use write::{append_counter, del, del_counter, put, put_counter};
pub use write_txn::{in_transaction, transaction, transaction_needs_retry};
