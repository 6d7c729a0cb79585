//! How the hot procedures (verify.rs, limit.rs) read and commit. An evaluation is a pure
//! function of one read view that writes its answer (JSON text) and the puts it needs into
//! this thread's `Scratch`; this module runs it over the right transaction:
//!  - inside this thread's open group-commit batch: through the batch, puts applied to it;
//!  - otherwise first over a read-only view (skipped when the caller expects writes); when
//!    puts are needed it is run again inside a write transaction — a batch opened here when
//!    group commit is on (the server), else a transaction of its own committed before return.
//!
//! `Scratch` is reused from call to call (cleared, never shrunk), so a hot call allocates
//! nothing once its buffers have grown to the sizes it needs.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::json;
use crate::shared;
use crate::store::{self, StoreError, View};
use crate::counterlog;

static GROUP_COMMIT: AtomicBool = AtomicBool::new(false);

/// The server turns group commit on: its JS side commits the batch at the end of each
/// event-loop turn and holds replies until then. Off (the default), every state-changing
/// call commits before it returns.
pub fn set_group_commit(on: bool) {
    GROUP_COMMIT.store(on, Ordering::Relaxed);
}

/// Bytes of every value a hot call writes (credits and window records are both 32 bytes).
pub const VALUE_BYTES: usize = 32;

/// The counters an evaluation changes (crate::counterlog): name and new 32-byte record.
#[derive(Default)]
pub struct Puts {
    items: Vec<(counterlog::Key, [u8; VALUE_BYTES])>,
}

impl Puts {
    pub fn clear(&mut self) {
        self.items.clear();
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub fn push(&mut self, key: &counterlog::Key, value: [u8; VALUE_BYTES]) {
        self.items.push((*key, value));
    }

    /// Puts every counter, then tells the transaction the time the call decided at.
    fn apply(&self, now_ms: i64) -> Result<(), StoreError> {
        self.items.iter().try_for_each(|(key, value)| counterlog::put(key, value))?;
        if !self.items.is_empty() {
            counterlog::note_time(now_ms);
        }
        Ok(())
    }
}

/// A store key assembled on the stack from parts (LMDB keys are at most 511 bytes; a
/// longer key is cut here at 512 bytes and then refused by the store as a bad argument).
pub struct KeyBuf([u8; 512]);

impl KeyBuf {
    pub fn new() -> KeyBuf {
        KeyBuf([0; 512])
    }

    pub fn of(&mut self, parts: &[&[u8]]) -> &[u8] {
        let mut n = 0;
        for part in parts {
            let take = part.len().min(self.0.len() - n);
            self.0[n..n + take].copy_from_slice(&part[..take]);
            n += take;
        }
        &self.0[..n]
    }
}

/// Per-thread buffers of the hot calls: the reply and the puts of the evaluation.
#[derive(Default)]
pub struct Scratch {
    /// The reply: the head of the success envelope (`envelope`), then the answer as JSON
    /// text, which the evaluation appends, then the envelope's closing brace (`reply`).
    pub out: Vec<u8>,
    pub puts: Puts,
    /// What only the cluster can decide, as JSON (empty: nothing; see `need_credits`). A call
    /// that leaves one declines (context.rs NEEDS_CLUSTER) and changes nothing.
    pub need: Vec<u8>,
    /// The answer spent credits the cluster paid for (context.rs CREDITS_PAID, PAID_USED).
    pub paid_used: bool,
    /// Shared windows the answer admitted in (applied with the puts: shared.rs).
    pub admitted: Vec<shared::Admitted>,
    /// Windows only Redis can decide: the call declines with a need (api/hot.rs).
    pub sync: Vec<shared::SyncWindow>,
    /// The head of the success envelope for this call.
    head: Vec<u8>,
    /// This call's request id (`envelope`), for its analytics event.
    pub request_id: Vec<u8>,
    /// What the call decided about, for its analytics event (events.rs): the verified key's
    /// API, or the namespace ids of a limit. Set by the call; `answer` empties it first.
    pub subject: Vec<u8>,
    /// The credits the answer spent (a VALID verification of a key with credits), for
    /// /metrics (decisions.rs). Set by the call; `answer` zeroes it first.
    pub spent: i64,
}

impl Scratch {
    /// The next run answers with the success envelope `{"meta":{"requestId":"<id>"},"data":`
    /// … `}`: the same bytes as src/rpc/envelope.ts successBody (test/engine/envelope.test.ts
    /// compares them).
    pub fn envelope(&mut self, request_id: &str) {
        self.head.clear();
        self.request_id.clear();
        self.request_id.extend_from_slice(request_id.as_bytes());
        json::raw(&mut self.head, "{\"meta\":{\"requestId\":");
        json::string(&mut self.head, request_id.as_bytes());
        json::raw(&mut self.head, "},\"data\":");
    }

    fn clear(&mut self) {
        self.out.clear();
        self.out.extend_from_slice(&self.head);
        self.puts.clear();
        self.need.clear();
        self.paid_used = false;
        self.admitted.clear();
        self.sync.clear();
    }

    /// The call needs Redis to decide these windows: it declines, changing nothing.
    pub fn need_sync(&mut self, windows: Vec<shared::SyncWindow>) {
        self.puts.clear();
        self.admitted.clear();
        self.sync = windows;
    }

    /// Writes the evaluation's counters into the open transaction; its shared admissions are
    /// counted (they come with counters: an admission of a cost above 0 writes its window).
    fn write(&self, now_ms: i64) -> Result<(), StoreError> {
        self.puts.apply(now_ms)?;
        shared::apply(&self.admitted, now_ms);
        Ok(())
    }


    /// The call needs the cluster to pay `cost` credits of the key `key_id` (this node's
    /// lease has not enough), or to refill its balance first (`refill_at`: the refill
    /// boundary that is due): `{"credits":{"keyId":…,"cost":…,"refillAt":…|null}}`
    /// (src/cluster/credits.ts reads it).
    pub fn need_credits(&mut self, key_id: &[u8], cost: i64, refill_at: Option<i64>) {
        self.need.clear();
        json::raw(&mut self.need, "{\"credits\":{\"keyId\":");
        json::string(&mut self.need, key_id);
        json::raw(&mut self.need, ",\"cost\":");
        json::int(&mut self.need, cost);
        json::raw(&mut self.need, ",\"refillAt\":");
        match refill_at {
            Some(at) => json::int(&mut self.need, at),
            None => json::raw(&mut self.need, "null"),
        }
        json::raw(&mut self.need, "}}");
    }

    /// Answers with `answer` (a `data` JSON computed earlier) instead of running a call.
    pub fn answer_with(&mut self, answer: &[u8]) {
        self.clear();
        self.out.extend_from_slice(answer);
    }

    /// The whole reply of the last run, as JS receives it.
    pub fn reply(&mut self) -> &[u8] {
        self.out.push(b'}');
        &self.out
    }
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch { out: Vec::with_capacity(1024), puts: Puts::default(), need: Vec::new(), paid_used: false, admitted: Vec::new(), sync: Vec::new(), head: Vec::with_capacity(64), request_id: Vec::with_capacity(32), subject: Vec::with_capacity(32), spent: 0 });
}

/// Runs `f` with this thread's scratch buffers. Hot calls do not nest (no JS runs inside
/// them), so the buffers are free whenever a hot call starts.
pub fn with_scratch<R>(f: impl FnOnce(&mut Scratch) -> R) -> R {
    SCRATCH.with(|s| match s.try_borrow_mut() {
        Ok(mut s) => f(&mut s),
        Err(_) => f(&mut Scratch::default()),
    })
}

/// What a hot call did to the store, as JS is told (context.rs: the effect field). The codes
/// are ordered by what the reply waits for: each asks all that the ones below it ask.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Effect {
    /// Nothing changed, and nothing was read of this thread's open batch's changes.
    Read,
    /// Nothing changed, but the answer read what this thread's open batch changed
    /// (store::take_uncommitted_read): it stands only if that batch commits.
    ReadUncommitted,
    /// Changes committed, or written into the batch this thread already had open.
    Wrote,
    /// Changes written into a batch this call opened: JS must commit it.
    OpenedBatch,
}

impl Effect {
    /// The effect's code in a hot call's context (src/engine/hotCalls.ts `Effect`).
    pub fn code(self) -> u32 {
        match self {
            Effect::Read => 0,
            Effect::ReadUncommitted => 1,
            Effect::Wrote => 2,
            Effect::OpenedBatch => 3,
        }
    }

    /// This effect of a call that read what the open batch changed, when `read_uncommitted`.
    pub fn reading(self, read_uncommitted: bool) -> Effect {
        if self == Effect::Read && read_uncommitted { Effect::ReadUncommitted } else { self }
    }
}

/// Discards this thread's batch when dropped (an early return or a panic after
/// `batch_begin`); `mem::forget` keeps the batch.
struct DiscardUnlessKept;

impl Drop for DiscardUnlessKept {
    fn drop(&mut self) {
        store::batch_abort();
    }
}

/// Evaluates over the right transaction (see the module comment); the answer of the
/// evaluation that counted is left in `scratch.out` (after the envelope's head).
pub fn run<E: From<StoreError>>(expect_writes: bool, now_ms: i64, scratch: &mut Scratch, eval: impl Fn(&View<'_>, &mut Scratch) -> Result<(), E>) -> Result<Effect, E> {
    let evaluate = |scratch: &mut Scratch| {
        scratch.clear();
        store::view(|v| eval(v, scratch))
    };
    if store::in_batch() {
        evaluate(scratch)?;
        scratch.write(now_ms)?;
        return Ok(if scratch.puts.is_empty() { Effect::Read } else { Effect::Wrote });
    }
    if !expect_writes {
        evaluate(scratch)?;
        if scratch.puts.is_empty() {
            return Ok(Effect::Read);
        }
    }
    if GROUP_COMMIT.load(Ordering::Relaxed) {
        store::batch_begin()?;
        // JS learns of the batch only from an Ok(OpenedBatch): if the evaluation refuses the
        // request (a query syntax error, an unknown limit), fails or panics, the batch this
        // call opened is discarded here, or it would stay open, never committed, under every
        // later call and keep management writes out (which was a bug).
        let opened = DiscardUnlessKept;
        evaluate(scratch)?;
        if scratch.puts.is_empty() {
            // A refusal (or any answer that changes nothing) needs no batch: dropping
            // `opened` discards it, so the turn does not hold the writer lock, nor (in disk
            // mode) fsync, for nothing.
            return Ok(Effect::Read);
        }
        scratch.write(now_ms)?;
        std::mem::forget(opened);
        return Ok(Effect::OpenedBatch);
    }
    let wrote = store::transaction(|| {
        evaluate(scratch)?;
        scratch.write(now_ms)?;
        Ok::<_, E>(!scratch.puts.is_empty())
    })?;
    Ok(if wrote { Effect::Wrote } else { Effect::Read })
}
