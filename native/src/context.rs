//! The context of a hot call (keys.verifyKey, ratelimits.limit, ratelimits.multiLimit): a
//! caller-owned buffer in a fixed layout, which src/engine/hotCalls.ts writes before each call
//! and reads the effect back from. All numbers little-endian:
//!
//! | offset | bytes | field |
//! |---|---|---|
//! | 0 | 8 | `nowMs`, f64: the time the call decides at, ms since the epoch (an integer) |
//! | 8 | 4 | flags, u32: bit 0 `VALIDATED`, the request bytes are the full way's (validated by the procedure's schema): the call answers or throws, never declines |
//! | 12 | 4 | effect, u32, written by the call: 0 nothing changed, 1 wrote (committed, or into this thread's open batch), 2 wrote into a batch the call opened, which the caller must commit (`hot::Effect`) |
//! | 16 | 4 | workspace id length |
//! | 20 | 4 | request id length; 0: the call draws the next id of this thread's sequence (reqid.rs) |
//! | 24 | 4 | scope length |
//! | 28 | 4 | zero |
//! | 32 | … | workspace id, request id, scope: UTF-8, back to back |
//!
//! The scope is what the root key may act on: "*" for every API (verifyKey) or namespace
//! (limit, multiLimit) of the workspace, else their ids joined by '\n' (verify::in_scope).

use crate::hot::Effect;

pub const HEADER_BYTES: usize = 32;
pub const VALIDATED: u32 = 1;
const EFFECT_AT: usize = 12;

/// A context read from its buffer.
#[derive(Debug, PartialEq)]
pub struct Context<'a> {
    pub now_ms: i64,
    pub validated: bool,
    pub workspace_id: &'a str,
    /// None: draw one.
    pub request_id: Option<&'a str>,
    pub scope: &'a str,
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
    if flags & !VALIDATED != 0 {
        return Err("unknown context flags");
    }
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
    Ok(Context { now_ms: now as i64, validated: flags & VALIDATED != 0, workspace_id, request_id: (!request_id.is_empty()).then_some(request_id), scope })
}

/// Writes the effect of the call into its context.
pub fn set_effect(b: &mut [u8], effect: Effect) {
    b[EFFECT_AT..EFFECT_AT + 4].copy_from_slice(&effect.code().to_le_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn context(now: f64, flags: u32, ws: &str, id: &str, scope: &str) -> Vec<u8> {
        let mut b = vec![0u8; HEADER_BYTES];
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
        assert_eq!(read(&b), Ok(Context { now_ms: 1_767_225_600_000, validated: true, workspace_id: "ws_1", request_id: Some("req_abc"), scope: "api_1\napi_2" }));
        let b = context(5.0, 0, "ws", "", "*");
        assert_eq!(read(&b).map(|c| (c.validated, c.request_id, c.scope)), Ok((false, None, "*")));
    }

    #[test]
    fn refuses_what_is_not_in_the_layout() {
        assert!(read(&[0; 31]).is_err());
        assert!(read(&context(1.5, 0, "ws", "", "*")).is_err());
        assert!(read(&context(f64::NAN, 0, "ws", "", "*")).is_err());
        assert!(read(&context(1.0, 2, "ws", "", "*")).is_err());
        assert!(read(&context(1.0, 0, "", "", "*")).is_err());
        let mut short = context(1.0, 0, "ws", "", "*");
        short.pop();
        assert!(read(&short).is_err());
    }

    #[test]
    fn writes_the_effect() {
        let mut b = context(1.0, 0, "ws", "", "*");
        set_effect(&mut b, Effect::OpenedBatch);
        assert_eq!(u32_at(&b, 12), 2);
        assert_eq!(read(&b).map(|c| c.workspace_id), Ok("ws"));
    }
}
