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
//! | 16..24 | refill_day         | 0 = daily; 1–31 = monthly on that day (last day of      |
//! |        |                    | shorter months)                                        |
//! | 24..32 | last_refill_at_ms  | when the balance was last set or refilled (Unix ms)   |
//!
//! No record = unlimited. Refill is lazy: at the first read after a UTC boundary (00:00 of
//! each day, or of the refill day) that is later than `last_refill_at_ms`, a balance below
//! `refill_amount` is set to it (a higher balance, e.g. after an increment, is kept).

use crate::counterlog::{self, Key};
use crate::fixed;

/// The name of the credits record of the key `key_id`.
pub fn record_key(key_id: &[u8]) -> Key {
    counterlog::named(counterlog::CREDITS, &[key_id])
}

pub const RECORD_BYTES: usize = 32;
const DAY_MS: i64 = 86_400_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Credits {
    pub remaining: i64,
    pub refill_amount: i64,
    pub refill_day: i64,
    pub last_refill_at_ms: i64,
}

impl Credits {
    pub fn decode(bytes: &[u8]) -> Option<Credits> {
        let [remaining, refill_amount, refill_day, last_refill_at_ms] = fixed::read_i64s::<4>(bytes)?;
        Some(Credits { remaining, refill_amount, refill_day, last_refill_at_ms })
    }

    pub fn encode(&self) -> [u8; RECORD_BYTES] {
        let mut out = [0u8; RECORD_BYTES];
        fixed::write_i64s(&[self.remaining, self.refill_amount, self.refill_day, self.last_refill_at_ms], &mut out);
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
        let c = Credits { remaining: 3, refill_amount: 100, refill_day: 0, last_refill_at_ms: ms(2026, 1, 1, 10) };
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
    fn encode_decode() {
        let c = Credits { remaining: 42, refill_amount: -1, refill_day: 31, last_refill_at_ms: 1_700_000_000_000 };
        assert_eq!(Credits::decode(&c.encode()), Some(c));
        assert_eq!(Credits::decode(&[0u8; 31]), None);
    }
}
