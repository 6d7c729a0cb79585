//! Sliding-window rate limiting over epoch-aligned buckets (DESIGN.md, as Unkey): one
//! implementation shared by keys.verifyKey's key/identity limits and ratelimits.limit.
//!
//! For a window of `duration_ms`, bucket `seq = floor(now / duration)` runs from
//! `seq·duration` to `(seq+1)·duration` (`reset`, absolute ms). With `current` and
//! `previous` the costs admitted in buckets seq and seq−1:
//!   effective = current + floor(previous · (1 − elapsed/duration)) + cost
//! and the request is refused when `effective > limit` (always when limit is 0).
//! Admission adds `cost` to `current`; a refusal changes nothing.
//!
//! THE layout of a window record (ratelimit_windows value, 32 bytes, i64 LE each):
//! duration_ms · seq · current · previous. A record whose `seq` is older than the previous
//! bucket holds nothing that still counts, so it may be deleted (the sweeper does).

use crate::fixed;

pub const RECORD_BYTES: usize = 32;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    pub duration_ms: i64,
    pub seq: i64,
    pub current: i64,
    pub previous: i64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decision {
    pub success: bool,
    /// limit − effective when admitted, else 0.
    pub remaining: i64,
    /// End of the current bucket (absolute ms).
    pub reset_ms: i64,
    /// The record to store if this decision is committed (unchanged when refused).
    pub next: Window,
}

impl Window {
    pub fn decode(bytes: &[u8]) -> Option<Window> {
        let [duration_ms, seq, current, previous] = fixed::read_i64s::<4>(bytes)?;
        Some(Window { duration_ms, seq, current, previous })
    }

    pub fn encode(&self) -> [u8; RECORD_BYTES] {
        let mut out = [0u8; RECORD_BYTES];
        fixed::write_i64s(&[self.duration_ms, self.seq, self.current, self.previous], &mut out);
        out
    }

    /// True when nothing in this record counts any more at `now_ms` (safe to delete).
    pub fn is_stale(&self, now_ms: i64) -> bool {
        self.duration_ms <= 0 || now_ms.div_euclid(self.duration_ms) > self.seq + 1
    }
}

/// The decision for `cost` against `limit` per `duration_ms` at `now_ms`, given the stored
/// record (None, or one for another duration, counts as empty).
pub fn decide(stored: Option<Window>, now_ms: i64, duration_ms: i64, limit: i64, cost: i64) -> Decision {
    decide_on(rolled(stored, now_ms, duration_ms), now_ms, limit, cost)
}

/// The stored record as it stands in the bucket of `now_ms` (a bucket later: its current
/// count becomes the previous one; older, or of another duration: empty).
pub fn rolled(stored: Option<Window>, now_ms: i64, duration_ms: i64) -> Window {
    let duration_ms = duration_ms.max(1);
    let seq = now_ms.div_euclid(duration_ms);
    let (current, previous) = match stored {
        Some(w) if w.duration_ms == duration_ms && w.seq == seq => (w.current, w.previous),
        Some(w) if w.duration_ms == duration_ms && w.seq + 1 == seq => (0, w.current),
        _ => (0, 0),
    };
    Window { duration_ms, seq, current, previous }
}

/// The part of the previous bucket that still counts at `now_ms`: its weight's numerator
/// (duration − elapsed, over the duration).
pub fn weight(base: &Window, now_ms: i64) -> i64 {
    base.duration_ms - (now_ms - base.seq * base.duration_ms)
}

/// The decision on a record already rolled to the bucket of `now_ms` (`rolled`).
pub fn decide_on(base: Window, now_ms: i64, limit: i64, cost: i64) -> Decision {
    let Window { duration_ms, seq, current, previous } = base;
    // floor(previous · (duration − elapsed) / duration) in integers (exact, no float drift).
    let weighted = ((previous as i128) * (weight(&base, now_ms) as i128) / (duration_ms as i128)) as i64;
    let effective = current.saturating_add(weighted).saturating_add(cost);
    let success = limit > 0 && effective <= limit;
    let reset_ms = (seq + 1) * duration_ms;
    if success {
        Decision { success, remaining: limit - effective, reset_ms, next: Window { current: current + cost, ..base } }
    } else {
        Decision { success, remaining: 0, reset_ms, next: base }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admits_up_to_the_limit_in_one_bucket() {
        let mut w = None;
        for i in 0..10 {
            let d = decide(w, 1_000, 1_000, 10, 1);
            assert!(d.success, "request {i}");
            assert_eq!(d.remaining, 9 - i);
            assert_eq!(d.reset_ms, 2_000);
            w = Some(d.next);
        }
        let d = decide(w, 1_999, 1_000, 10, 1);
        assert!(!d.success);
        assert_eq!(d.remaining, 0);
        assert_eq!(Some(d.next), w, "a refusal changes nothing");
    }

    #[test]
    fn previous_bucket_weighs_by_what_is_left_of_the_window() {
        let full = Some(Window { duration_ms: 1_000, seq: 1, current: 10, previous: 0 });
        // At the start of bucket 2 the previous bucket still counts fully: 10 + 1 > 10.
        assert!(!decide(full, 2_000, 1_000, 10, 1).success);
        // A quarter in: floor(10 · 0.75) = 7, so 3 more fit.
        let d = decide(full, 2_250, 1_000, 10, 3);
        assert!(d.success);
        assert_eq!(d.remaining, 0);
        assert!(!decide(full, 2_250, 1_000, 10, 4).success);
        // Two buckets later nothing counts.
        assert_eq!(decide(full, 3_000, 1_000, 10, 10).remaining, 0);
        assert!(decide(full, 3_000, 1_000, 10, 10).success);
    }

    #[test]
    fn cost_zero_peeks_and_large_cost_is_refused() {
        let w = Some(Window { duration_ms: 60_000, seq: 0, current: 5, previous: 0 });
        let peek = decide(w, 10, 60_000, 10, 0);
        assert!(peek.success);
        assert_eq!(peek.remaining, 5);
        assert_eq!(peek.next, w.unwrap());
        assert!(!decide(None, 10, 60_000, 10, 11).success);
        assert!(decide(None, 10, 60_000, 10, 10).success);
        let over = Some(Window { duration_ms: 60_000, seq: 0, current: 11, previous: 0 });
        assert!(!decide(over, 10, 60_000, 10, 0).success);
    }

    #[test]
    fn limit_zero_always_refuses_and_other_durations_start_fresh() {
        assert!(!decide(None, 0, 1_000, 0, 0).success);
        let w = Some(Window { duration_ms: 1_000, seq: 5, current: 100, previous: 100 });
        assert!(decide(w, 5_500, 2_000, 10, 1).success);
    }

    #[test]
    fn staleness_and_codec() {
        let w = Window { duration_ms: 1_000, seq: 3, current: 1, previous: 2 };
        assert!(!w.is_stale(4_999));
        assert!(w.is_stale(5_000));
        assert_eq!(Window::decode(&w.encode()), Some(w));
    }
}
