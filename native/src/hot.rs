//! How the hot procedures (verify.rs, limit.rs) read and commit. An evaluation is a pure
//! function of one read view returning its answer and the puts it needs; this module runs
//! it over the right transaction:
//!  - inside this thread's open group-commit batch: through the batch, puts applied to it;
//!  - otherwise first over a read-only view (skipped when the caller expects writes); when
//!    puts are needed it is run again inside a write transaction — a batch opened here when
//!    group commit is on (the server), else a transaction of its own committed before return.

use std::sync::atomic::{AtomicBool, Ordering};

use crate::store::{self, StoreError, Table, View};

static GROUP_COMMIT: AtomicBool = AtomicBool::new(false);

/// The server turns group commit on: its JS side commits the batch at the end of each
/// event-loop turn and holds replies until then. Off (the default), every state-changing
/// call commits before it returns.
pub fn set_group_commit(on: bool) {
    GROUP_COMMIT.store(on, Ordering::Relaxed);
}

pub struct Put {
    pub table: Table,
    pub key: Vec<u8>,
    pub value: Vec<u8>,
}

/// What a hot call did to the store, as JS is told ('0', '1', '2').
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Effect {
    /// Nothing changed.
    Read,
    /// Changes committed, or written into the batch this thread already had open.
    Wrote,
    /// Changes written into a batch this call opened: JS must commit it.
    OpenedBatch,
}

impl Effect {
    pub fn flag(self) -> char {
        match self {
            Effect::Read => '0',
            Effect::Wrote => '1',
            Effect::OpenedBatch => '2',
        }
    }
}

fn apply(puts: &[Put]) -> Result<(), StoreError> {
    puts.iter().try_for_each(|p| store::put(p.table, &p.key, &p.value))
}

pub fn run<T, E: From<StoreError>>(expect_writes: bool, eval: impl Fn(&View<'_>) -> Result<(T, Vec<Put>), E>) -> Result<(T, Effect), E> {
    if store::in_batch() {
        let (answer, puts) = store::view(&eval)?;
        apply(&puts)?;
        return Ok((answer, if puts.is_empty() { Effect::Read } else { Effect::Wrote }));
    }
    if !expect_writes {
        let (answer, puts) = store::view(&eval)?;
        if puts.is_empty() {
            return Ok((answer, Effect::Read));
        }
    }
    if GROUP_COMMIT.load(Ordering::Relaxed) {
        store::batch_begin()?;
        let (answer, puts) = store::view(&eval)?;
        apply(&puts)?;
        return Ok((answer, Effect::OpenedBatch));
    }
    let (answer, wrote) = store::transaction(|| {
        let (answer, puts) = store::view(&eval)?;
        apply(&puts)?;
        Ok::<_, E>((answer, !puts.is_empty()))
    })?;
    Ok((answer, if wrote { Effect::Wrote } else { Effect::Read }))
}
