//! The context of a hot call (keys.verifyKey, ratelimits.limit, ratelimits.multiLimit): a
//! caller-owned buffer in a fixed layout, which src/engine/hotCalls.ts writes before each call
//! and reads the effect back from. All numbers little-endian:
//!
//! | offset | bytes | field |
//! |---|---|---|
//! | 0 | 8 | `nowMs`, f64: the time the call decides at, ms since the epoch (an integer) |
//! | 8 | 4 | flags, u32 (below) |
//! | 12 | 4 | effect, u32, written by the call: 0 nothing changed, 1 wrote (committed, or into this thread's open batch), 2 wrote into a batch the call opened, which the caller must commit (`hot::Effect`) |
//! | 16 | 4 | workspace id length |
//! | 20 | 4 | request id length; 0: the call draws the next id of this thread's sequence (reqid.rs) |
//! | 24 | 4 | scope length |
//! | 28 | 4 | needs, u32, written by the call: `NEEDS_CLUSTER` (1) when it declined because only the cluster can decide (the reply is then the JSON of what it needs, hot.rs `Scratch::need`); `PAID_USED` (2) when it spent credits `CREDITS_PAID` paid for (without it, they go back) |
//! | 32 | 8 | credits balance, f64: with `CREDITS_PAID` or `CREDITS_REFUSED`, the cluster's balance the cluster reported |
//! | 40 | 4 | live nodes, u32: with `SHARED_WINDOWS` or `SPLIT_WINDOWS`, how many nodes the cluster has (≥ 1) |
//! | 44 | 4 | key hash length, u32: 0, the key is looked up under its SHA-256; or 32, keys.verifyKey looks it up under the 32 bytes that follow the scope instead: a migrated key's placeholder (src/domain/legacyHash.ts), never sent by a client |
//! | 48 | 16 | zero |
//! | 64 | … | workspace id, request id, scope: UTF-8, back to back; then the key hash, if any |
//!
//! Flags: `VALIDATED` (1), the request bytes are the full way's (validated by the procedure's
//! schema): the call answers or throws, never declines for its body. `LEASED_CREDITS` (2),
//! cluster mode: credits are spent from this node's lease (credits.rs `Lease`), and a call
//! the lease cannot pay for declines with a need. `CREDITS_PAID` (4): the cluster paid this
//! call's cost already (PostgreSQL took it from the balance, or the offline allowance did);
//! the lease is not touched. `CREDITS_REFUSED` (8): the cluster had not enough for it
//! (USAGE_EXCEEDED, should the call get that far). `SHARED_WINDOWS` (16): rate-limit windows
//! are counted with the other nodes' through Redis (shared.rs), and a call only Redis can
//! decide declines with a need. `SPLIT_WINDOWS` (32): Redis is away; each node keeps within
//! its share of every limit. `WINDOWS_GRANTED` (64, with `SHARED_WINDOWS`): the call is made
//! again after Redis granted its windows, and may take from grants other calls wait for.
//! `NO_EVENTS` (128): the call leaves no analytics event (the request said
//! `X-Unkey-Metrics: disabled`; events.rs).
//!
//! The scope is what the root key may act on: "*" for every API (verifyKey) or namespace
//! (limit, multiLimit) of the workspace, else their ids joined by '\n' (verify::in_scope).

use crate::hot::Effect;
use crate::shared::Windows;

pub const HEADER_BYTES: usize = 64;
pub const VALIDATED: u32 = 1;
pub const LEASED_CREDITS: u32 = 2;
pub const CREDITS_PAID: u32 = 4;
pub const CREDITS_REFUSED: u32 = 8;
pub const SHARED_WINDOWS: u32 = 16;
pub const SPLIT_WINDOWS: u32 = 32;
pub const WINDOWS_GRANTED: u32 = 64;
pub const NO_EVENTS: u32 = 128;
const FLAGS: u32 = VALIDATED | LEASED_CREDITS | CREDITS_PAID | CREDITS_REFUSED | SHARED_WINDOWS | SPLIT_WINDOWS | WINDOWS_GRANTED | NO_EVENTS;
const EFFECT_AT: usize = 12;
const NEEDS_AT: usize = 28;
const KEY_HASH_AT: usize = 44;
/// The call declined: only the cluster can decide it (hot.rs `Scratch::need`).
pub const NEEDS_CLUSTER: u32 = 1;
/// The call spent the credits `CREDITS_PAID` paid for.
pub const PAID_USED: u32 = 2;

/// How a call pays credits.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Credits {
    /// From the key's credits record (one node).
    Local,
    /// From this node's lease; a call it cannot pay for declines.
    Leased,
    /// The cluster paid the cost; its balance is `balance`.
    Paid { balance: i64 },
    /// The cluster had less than the cost: `balance`.
    Refused { balance: i64 },
}

/// A context read from its buffer.
#[derive(Debug, PartialEq)]
pub struct Context<'a> {
    pub now_ms: i64,
    pub validated: bool,
    pub workspace_id: &'a str,
    /// None: draw one.
    pub request_id: Option<&'a str>,
    pub scope: &'a str,
    pub credits: Credits,
    pub windows: Windows,
    /// The call leaves an analytics event (unless recording is off: events.rs).
    pub events: bool,
    /// keys.verifyKey: the hash to look the key's record up under instead of its SHA-256 (a
    /// migrated key's placeholder, src/edits/migrated.ts); None for every other call.
    pub key_hash: Option<&'a [u8; 32]>,
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// Reads a context; a buffer not in the layout is a caller's mistake, named in the error.
pub fn read(b: &[u8]) -> Result<Context<'_>, &'static str> {
    if b.len() < HEADER_BYTES {
        return Err("the context is shorter than its header");
    }
    let now = f64::from_le_bytes(b[0..8].try_into().expect("8 bytes"));
    if !now.is_finite() || now.fract() != 0.0 || now.abs() > 9_007_199_254_740_991.0 {
        return Err("nowMs must be a safe integer");
    }
    let flags = u32_at(b, 8);
    if flags & !FLAGS != 0 {
        return Err("unknown context flags");
    }
    let whole = |at: usize, what: &'static str| -> Result<i64, &'static str> {
        let v = f64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"));
        if !v.is_finite() || v.fract() != 0.0 || !(0.0..=9_007_199_254_740_991.0).contains(&v) {
            return Err(what);
        }
        Ok(v as i64)
    };
    let credits = match flags & (LEASED_CREDITS | CREDITS_PAID | CREDITS_REFUSED) {
        0 => Credits::Local,
        LEASED_CREDITS => Credits::Leased,
        CREDITS_PAID => Credits::Paid { balance: whole(32, "the credits balance must be a whole number ≥ 0")? },
        CREDITS_REFUSED => Credits::Refused { balance: whole(32, "the credits balance must be a whole number ≥ 0")? },
        _ => return Err("at most one of the credits flags"),
    };
    let nodes = u32_at(b, 40);
    let windows = match flags & (SHARED_WINDOWS | SPLIT_WINDOWS | WINDOWS_GRANTED) {
        0 => Windows::Own,
        _ if nodes == 0 => return Err("shared windows need the number of live nodes"),
        SHARED_WINDOWS => Windows::Shared { nodes, granted: false },
        f if f == SHARED_WINDOWS | WINDOWS_GRANTED => Windows::Shared { nodes, granted: true },
        SPLIT_WINDOWS => Windows::Split { nodes },
        _ => return Err("at most one of the windows flags (WINDOWS_GRANTED only with SHARED_WINDOWS)"),
    };
    let lengths = [u32_at(b, 16), u32_at(b, 20), u32_at(b, 24)].map(|n| n as usize);
    let mut at = HEADER_BYTES;
    let mut text = |len: usize| -> Result<&str, &'static str> {
        let part = b.get(at..at + len).ok_or("the context is shorter than its lengths say")?;
        at += len;
        std::str::from_utf8(part).map_err(|_| "a context string is not UTF-8")
    };
    let workspace_id = text(lengths[0])?;
    let request_id = text(lengths[1])?;
    let scope = text(lengths[2])?;
    if workspace_id.is_empty() {
        return Err("the context names no workspace");
    }
    let key_hash = match u32_at(b, KEY_HASH_AT) {
        0 => None,
        32 => Some(b.get(at..at + 32).and_then(|h| h.try_into().ok()).ok_or("the context is shorter than its lengths say")?),
        _ => return Err("the key hash is 32 bytes or none"),
    };
    Ok(Context { now_ms: now as i64, validated: flags & VALIDATED != 0, workspace_id, request_id: (!request_id.is_empty()).then_some(request_id), scope, credits, windows, events: flags & NO_EVENTS == 0, key_hash })
}

/// Writes the effect of the call into its context.
pub fn set_effect(b: &mut [u8], effect: Effect) {
    b[EFFECT_AT..EFFECT_AT + 4].copy_from_slice(&effect.code().to_le_bytes());
}

/// Writes what the call needs (0: nothing, it answered).
pub fn set_needs(b: &mut [u8], needs: u32) {
    b[NEEDS_AT..NEEDS_AT + 4].copy_from_slice(&needs.to_le_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn context(now: f64, flags: u32, ws: &str, id: &str, scope: &str) -> Vec<u8> {
        let mut b = vec![0u8; HEADER_BYTES];
        b[32..40].copy_from_slice(&12.0f64.to_le_bytes());
        b[0..8].copy_from_slice(&now.to_le_bytes());
        b[8..12].copy_from_slice(&flags.to_le_bytes());
        for (at, s) in [(16, ws), (20, id), (24, scope)] {
            b[at..at + 4].copy_from_slice(&(s.len() as u32).to_le_bytes());
        }
        b.extend_from_slice(format!("{ws}{id}{scope}").as_bytes());
        b
    }

    #[test]
    fn reads_the_layout() {
        let b = context(1_767_225_600_000.0, VALIDATED, "ws_1", "req_abc", "api_1\napi_2");
        assert_eq!(read(&b), Ok(Context { now_ms: 1_767_225_600_000, validated: true, workspace_id: "ws_1", request_id: Some("req_abc"), scope: "api_1\napi_2", credits: Credits::Local, windows: Windows::Own, events: true, key_hash: None }));
        let b = context(5.0, 0, "ws", "", "*");
        assert_eq!(read(&b).map(|c| (c.validated, c.request_id, c.scope)), Ok((false, None, "*")));
        assert_eq!(read(&context(5.0, LEASED_CREDITS, "ws", "", "*")).map(|c| c.credits), Ok(Credits::Leased));
        assert_eq!(read(&context(5.0, CREDITS_PAID, "ws", "", "*")).map(|c| c.credits), Ok(Credits::Paid { balance: 12 }));
        assert_eq!(read(&context(5.0, CREDITS_REFUSED | VALIDATED, "ws", "", "*")).map(|c| c.credits), Ok(Credits::Refused { balance: 12 }));
        let mut shared = context(5.0, SHARED_WINDOWS, "ws", "", "*");
        shared[40..44].copy_from_slice(&3u32.to_le_bytes());
        assert_eq!(read(&shared).map(|c| c.windows), Ok(Windows::Shared { nodes: 3, granted: false }));
        let mut placed = context(5.0, VALIDATED, "ws", "", "*");
        placed[44..48].copy_from_slice(&32u32.to_le_bytes());
        placed.extend_from_slice(&[7; 32]);
        assert_eq!(read(&placed).map(|c| c.key_hash), Ok(Some(&[7; 32])));
    }

    #[test]
    fn refuses_what_is_not_in_the_layout() {
        assert!(read(&[0; 31]).is_err());
        assert!(read(&context(1.5, 0, "ws", "", "*")).is_err());
        assert!(read(&context(f64::NAN, 0, "ws", "", "*")).is_err());
        assert!(read(&context(1.0, 64, "ws", "", "*")).is_err());
        // Shared windows without a node count.
        assert!(read(&context(1.0, SPLIT_WINDOWS, "ws", "", "*")).is_err());
        assert!(read(&context(1.0, CREDITS_PAID | CREDITS_REFUSED, "ws", "", "*")).is_err());
        let mut negative = context(1.0, CREDITS_PAID, "ws", "", "*");
        negative[32..40].copy_from_slice(&(-1.0f64).to_le_bytes());
        assert!(read(&negative).is_err());
        assert!(read(&context(1.0, 0, "", "", "*")).is_err());
        let mut short = context(1.0, 0, "ws", "", "*");
        short.pop();
        assert!(read(&short).is_err());
        // A key hash not 32 bytes long, or missing.
        let mut odd = context(1.0, 0, "ws", "", "*");
        odd[44..48].copy_from_slice(&16u32.to_le_bytes());
        odd.extend_from_slice(&[7; 16]);
        assert!(read(&odd).is_err());
        let mut missing = context(1.0, 0, "ws", "", "*");
        missing[44..48].copy_from_slice(&32u32.to_le_bytes());
        assert!(read(&missing).is_err());
    }

    #[test]
    fn writes_the_effect() {
        let mut b = context(1.0, 0, "ws", "", "*");
        set_effect(&mut b, Effect::OpenedBatch);
        assert_eq!(u32_at(&b, 12), 3);
        set_needs(&mut b, NEEDS_CLUSTER);
        assert_eq!(u32_at(&b, 28), 1);
        assert_eq!(read(&b).map(|c| c.workspace_id), Ok("ws"));
    }
}
