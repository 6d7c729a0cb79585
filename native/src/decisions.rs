//! Counters of the hot calls' decisions, for /metrics (src/rpc/metrics.ts): verifications
//! by outcome, rate-limit decisions passed and refused (a multiLimit's limits one each) and
//! credits spent, counted for every answered call, whether or not analytics records it.
//! api/hot.rs counts each call once it has its reply, from the reply's own bytes: the code
//! is the first `"code":"` of a verification's envelope (the `meta` before it holds only the
//! request id), and a `"passed":` or `"success":` outside a JSON string is a limit's
//! verdict (inside a string every `"` is escaped).

use std::sync::atomic::{AtomicU64, Ordering};

use crate::events::{LIMIT, MULTI_LIMIT, VERIFY};

use std::ffi::CStr;

/// keys.verifyKey's codes, in the order `counts` reports them (NUL-terminated: they name
/// the properties of decisionCounts' `outcomes`).
pub const OUTCOMES: [&CStr; 7] = [c"VALID", c"NOT_FOUND", c"DISABLED", c"EXPIRED", c"INSUFFICIENT_PERMISSIONS", c"RATE_LIMITED", c"USAGE_EXCEEDED"];

const ZERO: AtomicU64 = AtomicU64::new(0);
static VERIFIED: [AtomicU64; OUTCOMES.len()] = [ZERO; OUTCOMES.len()];
static PASSED: AtomicU64 = AtomicU64::new(0);
static REFUSED: AtomicU64 = AtomicU64::new(0);
static SPENT: AtomicU64 = AtomicU64::new(0);

/// Counts one answered call of `kind` (events.rs kinds) from its reply; `spent`: the credits
/// a verification spent.
pub fn count(kind: u8, reply: &[u8], spent: i64) {
    match kind {
        VERIFY => {
            if let Some(code) = after(reply, b"\"code\":\"").and_then(|rest| rest.split(|&b| b == b'"').next()) {
                if let Some(i) = OUTCOMES.iter().position(|o| o.to_bytes() == code) {
                    VERIFIED[i].fetch_add(1, Ordering::Relaxed);
                }
            }
            if spent > 0 {
                SPENT.fetch_add(spent as u64, Ordering::Relaxed);
            }
        }
        LIMIT => verdicts(reply, b"\"success\":"),
        MULTI_LIMIT => {
            if let Some(limits) = after(reply, b"\"limits\":[") {
                verdicts(limits, b"\"passed\":");
            }
        }
        _ => {}
    }
}

/// Counts every `name` true or false in `text`.
fn verdicts(mut text: &[u8], name: &[u8]) {
    while let Some(rest) = after(text, name) {
        match rest.first() {
            Some(b't') => PASSED.fetch_add(1, Ordering::Relaxed),
            Some(b'f') => REFUSED.fetch_add(1, Ordering::Relaxed),
            _ => 0,
        };
        text = rest;
    }
}

/// What follows the first `needle` in `text`.
fn after<'a>(text: &'a [u8], needle: &[u8]) -> Option<&'a [u8]> {
    // On the hot path: a byte compare per position, the whole needle only where its first byte is.
    let first = *needle.first()?;
    let last_start = text.len().checked_sub(needle.len())?;
    (0..=last_start).find(|&at| text[at] == first && &text[at..at + needle.len()] == needle).map(|at| &text[at + needle.len()..])
}

/// Verifications by outcome (OUTCOMES' order), limits passed, limits refused, credits spent.
pub fn counts() -> ([u64; OUTCOMES.len()], u64, u64, u64) {
    let n = |c: &AtomicU64| c.load(Ordering::Relaxed);
    (std::array::from_fn(|i| n(&VERIFIED[i])), n(&PASSED), n(&REFUSED), n(&SPENT))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_outcomes_verdicts_and_spent_credits_from_replies() {
        let before = counts();
        count(VERIFY, br#"{"meta":{"requestId":"req_1"},"data":{"valid":true,"code":"VALID","keyId":"k","meta":{"code":"DISABLED"},"credits":3}}"#, 2);
        count(VERIFY, br#"{"meta":{"requestId":"req_2"},"data":{"valid":false,"code":"USAGE_EXCEEDED","keyId":"k"}}"#, 0);
        count(LIMIT, br#"{"meta":{"requestId":"req_3"},"data":{"limit":1,"remaining":0,"reset":9,"success":false}}"#, 0);
        count(MULTI_LIMIT, br#"{"meta":{"requestId":"req_4"},"data":{"passed":false,"limits":[{"identifier":"\"passed\":true","passed":true},{"passed":false}]}}"#, 0);
        let after = counts();
        assert_eq!(after.0[0] - before.0[0], 1, "VALID");
        assert_eq!(after.0[2] - before.0[2], 0, "a code in the key's meta is not the outcome");
        assert_eq!(after.0[6] - before.0[6], 1, "USAGE_EXCEEDED");
        assert_eq!(after.1 - before.1, 1, "one limit passed (the text in the identifier is not a verdict)");
        assert_eq!(after.2 - before.2, 2, "a limit and a multiLimit's limit refused");
        assert_eq!(after.3 - before.3, 2, "credits spent");
    }
}
