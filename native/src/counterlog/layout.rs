//! What the log stores, and where (see the module comment of counterlog/: "Names",
//! "Layout", and the `LogState` and removals journal that processes sharing the store read).

use crate::hash;
use crate::store::{StoreError, Table, View};
use crate::window::RECORD_BYTES;

/// The name of a counter: its kind's tag, then 15 bytes of a digest.
pub type Key = [u8; 16];

/// Tag of a `ratelimits.limit` window (limit.rs window_key).
pub const LIMITER_WINDOW: u8 = 0x01;
/// Tag of a key's or an identity's rate-limit window (verify.rs).
pub const KEY_WINDOW: u8 = 0x02;
/// Tag of a key's credits record (credits.rs); never stale.
pub const CREDITS: u8 = 0x03;
/// Tag of this node's lease of a key's credits in cluster mode (credits.rs `Lease`); never
/// stale.
pub const CREDIT_LEASE: u8 = 0x04;

/// Whether a counter of this name is a rate-limit window (window.rs), which goes stale; the
/// others (credits, leases) live until removed.
pub fn is_window(key: &Key) -> bool {
    key[0] == LIMITER_WINDOW || key[0] == KEY_WINDOW
}

/// The name of the counter of kind `tag` for the concatenation of `parts`.
pub fn named(tag: u8, parts: &[&[u8]]) -> Key {
    let digest = hash::sha256_parts(parts);
    let mut key = [0u8; 16];
    key[0] = tag;
    key[1..].copy_from_slice(&digest[..15]);
    key
}

/// A counter's 32-byte record (window.rs or credits.rs).
pub(super) type Value = [u8; RECORD_BYTES];

pub(super) const LOG: Table = Table::COUNTER_LOG;

/// The sequence number of a log key (u64 big-endian).
pub(super) fn seq_of(key: &[u8]) -> u64 {
    key.try_into().map_or(0, u64::from_be_bytes)
}

/// A log value: the counter's name and its record.
pub(super) fn split(record: &[u8]) -> Result<(Key, Value), StoreError> {
    match (record.get(..16), record.get(16..)) {
        (Some(key), Some(value)) if value.len() == RECORD_BYTES => Ok((key.try_into().expect("16"), value.try_into().expect("32"))),
        _ => Err(StoreError::BadArgument("counter_log holds a record of the wrong size".into())),
    }
}

/// Table META: `LogState` (see the module comment); absent before the first transaction that
/// needed it, which reads as all zeros.
pub(super) const LOG_STATE: &[u8] = b"counter_log_state";

/// What every process sharing the store must know of the log beyond its records.
#[derive(Clone, Copy, Default, PartialEq, Debug)]
pub(super) struct LogState {
    /// The highest sequence number given out, when above the log's last key.
    pub(super) high: u64,
    /// Live counters removed (`remove`) since the store was made.
    pub(super) removals: u64,
}

impl LogState {
    pub(super) fn read(v: &View<'_>) -> Result<LogState, StoreError> {
        match v.get(Table::META, LOG_STATE)? {
            None => Ok(LogState::default()),
            Some(b) if b.len() == 16 => Ok(LogState {
                high: u64::from_le_bytes(b[..8].try_into().expect("8 bytes")),
                removals: u64::from_le_bytes(b[8..].try_into().expect("8 bytes")),
            }),
            Some(_) => Err(StoreError::BadArgument("meta.counter_log_state has the wrong size".into())),
        }
    }

    pub(super) fn encode(self) -> [u8; 16] {
        let mut out = [0u8; 16];
        out[..8].copy_from_slice(&self.high.to_le_bytes());
        out[8..].copy_from_slice(&self.removals.to_le_bytes());
        out
    }
}

/// Table META: removal number n (u64 big-endian) after this prefix → the counter's name ‖ the
/// sequence number removed (u64 little-endian). Only the last `JOURNAL_KEEP` are kept.
const JOURNAL_PREFIX: &[u8] = b"counter_log_removed/";
pub(super) const JOURNAL_KEEP: u64 = 4096;

pub(super) fn journal_key(n: u64) -> [u8; JOURNAL_PREFIX.len() + 8] {
    let mut key = [0u8; JOURNAL_PREFIX.len() + 8];
    key[..JOURNAL_PREFIX.len()].copy_from_slice(JOURNAL_PREFIX);
    key[JOURNAL_PREFIX.len()..].copy_from_slice(&n.to_be_bytes());
    key
}
