//! What a transaction leaves for the other processes sharing the store besides its records
//! (see the module comment of counterlog/, on removals and sequence numbers): the stored
//! `LogState` and the journal of removed counters.

use crate::store::{self, StoreError, Table};

use super::layout::{journal_key, seq_of, LogState, JOURNAL_KEEP, LOG, LOG_STATE};
use super::txn_log::with_log;

/// Stores the `LogState` when this transaction changed it, and journals its removals: it
/// removed live counters, or its deletions left the log's last key below the highest
/// sequence number given out.
pub(super) fn save_state() -> Result<(), StoreError> {
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
