//! Credits: the usage-limit balance of a key and its refill, as pure functions over one
//! fixed record, and where that record is stored.
//!
//! Where: a counter of counterlog/ named `record_key(keyId)`. Older stores kept these
//! records in the `credits` table under the bare keyId, then in `ratelimit_windows` at
//! `k/<keyId>` (migrate.rs moves them).
//!
//! THE layout of a credits record (32 bytes):
//!
//! | bytes  | field              | meaning                                                |
//! |--------|--------------------|--------------------------------------------------------|
//! | 0..8   | remaining (i64 LE) | balance, ≥ 0                                           |
//! | 8..16  | refill_amount      | −1 = no refill; else the balance a refill sets          |
//! | 16..24 | refill_day         | bits 0..8: 0 = daily; 1–31 = monthly on that day (last  |
//! |        | and cluster        | day of shorter months); cluster mode (0 on one node):   |
//! |        | state              | bits 8..40 the epoch of the cluster's balance, bit 40   |
//! |        |                    | `exhausted` (PostgreSQL refused a spend with the balance|
//! |        |                    | at 0 and no lease out: a spend the lease cannot pay is  |
//! |        |                    | refused here until a change of the balance arrives)     |
//! | 24..32 | last_refill_at_ms  | when the balance was last set or refilled (Unix ms)   |
//!
//! No record = unlimited. Refill is lazy: at the first read after a UTC boundary (00:00 of
//! each day, or of the refill day) that is later than `last_refill_at_ms`, a balance below
//! `refill_amount` is set to it (a higher balance, e.g. after an increment, is kept).

use std::sync::Mutex;

use crate::counterlog::{self, Key};
use crate::fixed;
use crate::store::{self, StoreError};

/// The name of the credits record of the key `key_id`.
pub fn record_key(key_id: &[u8]) -> Key {
    counterlog::named(counterlog::CREDITS, &[key_id])
}

/// The name of this node's lease record of the key `key_id` (cluster mode).
pub fn lease_key(key_id: &[u8]) -> Key {
    counterlog::named(counterlog::CREDIT_LEASE, &[key_id])
}

/// The table id under which a dry run notes credits set or deleted (dryRun): the key id, and
/// the tuple `[remaining, refillAmount, refillDay, lastRefillAtMs]` as four f64 LE (absent:
/// deleted). src/cluster/changes.ts reads them back.
pub const CREDITS_WRITES: u8 = 100;

/// The value a dry run notes as the credits' before: none that a set leaves (an empty
/// value), so that every set and delete is kept. PostgreSQL takes credits as they are set
/// (the cluster's balance is not the one this node knows), so a set equal to what this node
/// knew is still a set, and a delete is one even where this node had no balance.
pub fn any_before() -> Result<Option<Vec<u8>>, StoreError> {
    Ok(Some(Vec::new()))
}

/// The key id a credits record may be named by (no '/').
pub fn checked_key_id(key_id: &[u8]) -> Result<&[u8], StoreError> {
    if key_id.contains(&b'/') {
        return Err(StoreError::BadArgument("keyId must not contain '/'".into()));
    }
    Ok(key_id)
}

/// Sets the key's balance (inside a write transaction): a record change, noted by a dry run.
pub fn set(key_id: &[u8], c: &Credits) -> Result<(), StoreError> {
    let key_id = checked_key_id(key_id)?;
    let tuple: Vec<u8> = [c.remaining, c.refill_amount, c.refill_day, c.last_refill_at_ms].iter().flat_map(|v| (*v as f64).to_le_bytes()).collect();
    store::note_written(CREDITS_WRITES, key_id, any_before, Some(&tuple))?;
    store::note_records_change()?;
    counterlog::put(&record_key(key_id), &c.encode())
}

pub const RECORD_BYTES: usize = 32;
const DAY_MS: i64 = 86_400_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Credits {
    pub remaining: i64,
    pub refill_amount: i64,
    pub refill_day: i64,
    pub last_refill_at_ms: i64,
    /// Cluster mode: the epoch of the balance (see `Lease`); 0 on one node.
    pub epoch: u32,
    /// Cluster mode: the balance is 0 and no node holds a lease of it, as PostgreSQL last said.
    pub exhausted: bool,
}

const EXHAUSTED_BIT: i64 = 1 << 40;

impl Credits {
    /// A balance as a caller sets it (one node, no epoch), if in range: remaining ≥ 0;
    /// refill_amount −1 (none) or ≥ 1; refill_day 0 or 1–31.
    pub fn new(remaining: i64, refill_amount: i64, refill_day: i64, last_refill_at_ms: i64) -> Option<Credits> {
        let c = Credits { remaining, refill_amount, refill_day, last_refill_at_ms, epoch: 0, exhausted: false };
        let in_range = c.remaining >= 0 && (c.refill_amount == -1 || c.refill_amount >= 1) && (0..=31).contains(&c.refill_day);
        in_range.then_some(c)
    }

    pub fn decode(bytes: &[u8]) -> Option<Credits> {
        let [remaining, refill_amount, packed, last_refill_at_ms] = fixed::read_i64s::<4>(bytes)?;
        Some(Credits { remaining, refill_amount, refill_day: packed & 0xff, last_refill_at_ms, epoch: (packed >> 8) as u32, exhausted: packed & EXHAUSTED_BIT != 0 })
    }

    pub fn encode(&self) -> [u8; RECORD_BYTES] {
        let mut out = [0u8; RECORD_BYTES];
        let packed = (self.refill_day & 0xff) | (i64::from(self.epoch) << 8) | if self.exhausted { EXHAUSTED_BIT } else { 0 };
        fixed::write_i64s(&[self.remaining, self.refill_amount, packed, self.last_refill_at_ms], &mut out);
        out
    }

    /// The record as of `now_ms`, with a due refill applied; `true` if it changed.
    pub fn refilled(self, now_ms: i64) -> (Credits, bool) {
        if self.refill_amount < 0 {
            return (self, false);
        }
        let boundary = last_boundary(now_ms, self.refill_day);
        if self.last_refill_at_ms >= boundary {
            return (self, false);
        }
        let remaining = self.remaining.max(self.refill_amount);
        (Credits { remaining, last_refill_at_ms: now_ms, ..self }, true)
    }
}

/// THE layout of a lease record (cluster mode, 32 bytes): this node's part of a key's credits,
/// granted by PostgreSQL (src/cluster/credits.ts). In cluster mode the credits record above
/// holds the cluster's balance as this node last learnt it (what is not leased to any node),
/// and verifications spend from the lease alone.
///
/// | bytes  | field          | meaning                                                    |
/// |--------|----------------|------------------------------------------------------------|
/// | 0..8   | remaining      | what this node may still spend                             |
/// | 8..16  | granted        | all PostgreSQL granted this node under `epoch` (cumulative) |
/// | 16..24 | returned       | all this node gave back under `epoch` (cumulative)         |
/// | 24..28 | epoch (u32)    | the balance's epoch: a set or a refill starts a new one,   |
/// |        |                | which voids the leases of the one before                   |
/// | 28..32 | low (u32)      | at or below this remaining, the lease is running low: the  |
/// |        |                | next is asked for before it runs out                       |
///
/// Cumulative totals make grants and returns idempotent: the node and PostgreSQL compare
/// totals rather than add amounts, so one repeated after a crash counts once.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Lease {
    pub remaining: i64,
    pub granted: i64,
    pub returned: i64,
    pub epoch: u32,
    pub low: u32,
}

impl Lease {
    pub fn decode(bytes: &[u8]) -> Option<Lease> {
        let [remaining, granted, returned, packed] = fixed::read_i64s::<4>(bytes)?;
        Some(Lease { remaining, granted, returned, epoch: packed as u32, low: (packed >> 32) as u32 })
    }

    pub fn encode(&self) -> [u8; RECORD_BYTES] {
        let mut out = [0u8; RECORD_BYTES];
        let packed = i64::from(self.epoch) | (i64::from(self.low) << 32);
        fixed::write_i64s(&[self.remaining, self.granted, self.returned, packed], &mut out);
        out
    }

    /// The lease after PostgreSQL reported `granted` in all under `epoch`: a newer epoch
    /// starts the lease over (the older one was voided), an older one changes nothing, and a
    /// total this record has counted already changes nothing either.
    pub fn with_grant(self, epoch: u32, granted: i64) -> Lease {
        if epoch < self.epoch {
            return self;
        }
        let base = if epoch > self.epoch { Lease { epoch, ..Lease::default() } } else { self };
        let added = granted - base.granted;
        if added <= 0 {
            return base;
        }
        let remaining = base.remaining + added;
        Lease { remaining, granted, low: (remaining / 4).clamp(0, i64::from(u32::MAX)) as u32, ..base }
    }

    /// The lease after a change of the cluster's balance under `epoch` reached this node.
    pub fn with_epoch(self, epoch: u32) -> Lease {
        if epoch > self.epoch { Lease { epoch, ..Lease::default() } } else { self }
    }

    /// The lease with everything it has left given back (`returned` grows by `remaining`).
    pub fn given_back(self) -> Lease {
        Lease { remaining: 0, returned: self.returned + self.remaining, low: 0, ..self }
    }
}

/// Keys whose lease went low since the cluster last asked (`take_low`): a hint to ask for the
/// next lease before this one runs out. At most `MAX_LOW` are kept (past that, a running-out
/// lease is found when a call declines).
static LOW: Mutex<Vec<Box<[u8]>>> = Mutex::new(Vec::new());
const MAX_LOW: usize = 4096;

/// A spend took the lease of `key_id` to its low mark.
pub fn note_low(key_id: &[u8]) {
    let mut low = LOW.lock().unwrap_or_else(|e| e.into_inner());
    if low.len() < MAX_LOW && !low.iter().any(|k| **k == *key_id) {
        low.push(key_id.into());
    }
}

/// The keys whose lease went low since the last call.
pub fn take_low() -> Vec<Box<[u8]>> {
    std::mem::take(&mut *LOW.lock().unwrap_or_else(|e| e.into_inner()))
}

/// Days since 1970-01-01 → (year, month 1–12, day 1–31), proleptic Gregorian (H. Hinnant).
pub fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// (year, month 1–12, day) → days since 1970-01-01.
pub fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

pub fn days_in_month(y: i64, m: i64) -> i64 {
    let next = if m == 12 { days_from_civil(y + 1, 1, 1) } else { days_from_civil(y, m + 1, 1) };
    next - days_from_civil(y, m, 1)
}

/// The latest refill instant ≤ now_ms: today's 00:00 UTC (daily, refill_day 0) or 00:00 UTC
/// of the refill day this month, or last month when that day has not come yet.
pub fn last_boundary(now_ms: i64, refill_day: i64) -> i64 {
    let today = now_ms.div_euclid(DAY_MS);
    if refill_day <= 0 {
        return today * DAY_MS;
    }
    let (y, m, _) = civil_from_days(today);
    let this_month = days_from_civil(y, m, refill_day.min(days_in_month(y, m)));
    if this_month <= today {
        return this_month * DAY_MS;
    }
    let (py, pm) = if m == 1 { (y - 1, 12) } else { (y, m - 1) };
    days_from_civil(py, pm, refill_day.min(days_in_month(py, pm))) * DAY_MS
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(y: i64, m: i64, d: i64, h: i64) -> i64 {
        days_from_civil(y, m, d) * DAY_MS + h * 3_600_000
    }

    #[test]
    fn civil_round_trip() {
        for days in [-1000, 0, 59, 60, 11_016, 19_782, 20_000, 50_000] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(days_in_month(2024, 2), 29);
        assert_eq!(days_in_month(2025, 2), 28);
        assert_eq!(days_in_month(2100, 2), 28);
        assert_eq!(days_in_month(2000, 2), 29);
    }

    #[test]
    fn daily_boundary_is_midnight_utc() {
        assert_eq!(last_boundary(ms(2026, 3, 5, 13), 0), ms(2026, 3, 5, 0));
        assert_eq!(last_boundary(ms(2026, 3, 5, 0), 0), ms(2026, 3, 5, 0));
    }

    #[test]
    fn monthly_boundary_clamps_to_last_day() {
        // refillDay 31: Jan 31, then Feb 28 (or 29), then Mar 31.
        assert_eq!(last_boundary(ms(2025, 2, 27, 12), 31), ms(2025, 1, 31, 0));
        assert_eq!(last_boundary(ms(2025, 2, 28, 1), 31), ms(2025, 2, 28, 0));
        assert_eq!(last_boundary(ms(2024, 2, 29, 1), 31), ms(2024, 2, 29, 0));
        assert_eq!(last_boundary(ms(2024, 2, 28, 23), 31), ms(2024, 1, 31, 0));
        assert_eq!(last_boundary(ms(2025, 3, 30, 0), 31), ms(2025, 2, 28, 0));
        // Before the day in January → December of the year before.
        assert_eq!(last_boundary(ms(2026, 1, 3, 0), 15), ms(2025, 12, 15, 0));
    }

    #[test]
    fn refill_sets_balance_once_per_boundary() {
        let c = Credits { remaining: 3, refill_amount: 100, refill_day: 0, last_refill_at_ms: ms(2026, 1, 1, 10), epoch: 0, exhausted: false };
        let (same, changed) = c.refilled(ms(2026, 1, 1, 23));
        assert!(!changed);
        assert_eq!(same.remaining, 3);
        let (next, changed) = c.refilled(ms(2026, 1, 2, 0));
        assert!(changed);
        assert_eq!(next.remaining, 100);
        let (again, changed) = next.refilled(ms(2026, 1, 2, 5));
        assert!(!changed);
        assert_eq!(again, next);
        // A balance above the amount is kept.
        let rich = Credits { remaining: 500, ..c };
        assert_eq!(rich.refilled(ms(2026, 1, 3, 0)).0.remaining, 500);
        // No refill configured: never changes.
        let none = Credits { refill_amount: -1, ..c };
        assert!(!none.refilled(ms(2027, 1, 1, 0)).1);
    }

    #[test]
    fn lease_grants_and_returns_count_once() {
        let l = Lease::default().with_grant(1, 40);
        assert_eq!((l.remaining, l.granted, l.epoch, l.low), (40, 40, 1, 10));
        // The same total again (a grant applied twice) adds nothing; a larger one adds the rest.
        assert_eq!(l.with_grant(1, 40), l);
        let l = Lease { remaining: 5, ..l }.with_grant(1, 60);
        assert_eq!((l.remaining, l.granted), (25, 60));
        // An older epoch's grant is void; a newer epoch starts over.
        assert_eq!(l.with_grant(0, 500), l);
        let n = l.with_grant(2, 7);
        assert_eq!((n.remaining, n.granted, n.returned, n.epoch), (7, 7, 0, 2));
        // Given back: returned grows by what was left.
        let b = Lease { remaining: 9, returned: 3, ..l }.given_back();
        assert_eq!((b.remaining, b.returned), (0, 12));
        assert_eq!(l.with_epoch(1), l);
        assert_eq!(l.with_epoch(3), Lease { epoch: 3, ..Lease::default() });
        assert_eq!(Lease::decode(&n.encode()), Some(n));
    }

    #[test]
    fn encode_decode() {
        let c = Credits { remaining: 42, refill_amount: -1, refill_day: 31, last_refill_at_ms: 1_700_000_000_000, epoch: 0, exhausted: false };
        assert_eq!(Credits::decode(&c.encode()), Some(c));
        // The epoch shares a field with the refill day; a record of one node reads as epoch 0.
        let e = Credits { epoch: 4_000_000_000, exhausted: true, ..c };
        assert_eq!(Credits::decode(&e.encode()), Some(e));
        assert_eq!(e.encode()[..16], c.encode()[..16]);
        assert_eq!(Credits::decode(&[0u8; 31]), None);
    }
}
