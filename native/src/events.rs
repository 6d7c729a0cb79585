//! Analytics events of the hot calls (docs/analytics.md): every verifyKey, limit and
//! multiLimit decision that answered leaves one record here, appended by the serving thread
//! that decided it; the analytics worker (src/analytics/worker.ts) takes them all at once
//! (`drain`) and writes them to DuckDB. The serving thread only copies a few hundred bytes
//! under a lock nobody holds for longer than a copy: parsing and writing happen off it.
//!
//! The buffer is bounded (`set`): a record that does not fit is dropped and counted, so a
//! worker that falls behind costs events, never memory without bound.
//!
//! A record, all numbers little-endian:
//!
//! | bytes | field |
//! |---|---|
//! | 4 | the record's length, these 4 bytes included |
//! | 1 | kind: 1 verifyKey, 2 limit, 3 multiLimit |
//! | 3 | zero |
//! | 8 | time, i64 ms since the epoch (the time the call decided at) |
//! | 4 | latency, u32 µs spent deciding (inside the engine) |
//! | 4+n × 5 | workspace id, request id, subject, request body, reply: each a u32 length and its bytes |
//!
//! The subject is the API the verified key belongs to (empty: no key of the caller's), or
//! the namespace ids of a limit / multiLimit, in the request's order, joined by '\n'. The
//! request body is the JSON the call read, the reply the whole success envelope it answered.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

pub const VERIFY: u8 = 1;
pub const LIMIT: u8 = 2;
pub const MULTI_LIMIT: u8 = 3;

static ON: AtomicBool = AtomicBool::new(false);
static CAPACITY: AtomicUsize = AtomicUsize::new(0);
static DROPPED: AtomicU64 = AtomicU64::new(0);
static RECORDED: AtomicU64 = AtomicU64::new(0);
static BUFFER: Mutex<Vec<u8>> = Mutex::new(Vec::new());

/// Turns recording on with a buffer of at most `capacity` bytes, or off (capacity 0); what
/// is buffered stays for `drain`.
pub fn set(capacity: usize) {
    CAPACITY.store(capacity, Ordering::Relaxed);
    ON.store(capacity > 0, Ordering::Relaxed);
}

/// Whether events are recorded (a hot call asks before it gathers one).
pub fn on() -> bool {
    ON.load(Ordering::Relaxed)
}

/// One event, as the module comment lays it out.
pub struct Event<'a> {
    pub kind: u8,
    pub time_ms: i64,
    pub latency_us: u32,
    pub workspace_id: &'a [u8],
    pub request_id: &'a [u8],
    pub subject: &'a [u8],
    pub body: &'a [u8],
    pub reply: &'a [u8],
}

const HEAD: usize = 4 + 4 + 8 + 4;

/// Appends `e`, or counts it dropped when the buffer is full (or recording is off).
pub fn record(e: &Event<'_>) {
    let parts = [e.workspace_id, e.request_id, e.subject, e.body, e.reply];
    let len = HEAD + parts.iter().map(|p| 4 + p.len()).sum::<usize>();
    let mut buf = BUFFER.lock().unwrap_or_else(|p| p.into_inner());
    if !on() || buf.len() + len > CAPACITY.load(Ordering::Relaxed) || len > u32::MAX as usize {
        DROPPED.fetch_add(1, Ordering::Relaxed);
        return;
    }
    buf.reserve(len);
    buf.extend_from_slice(&(len as u32).to_le_bytes());
    buf.extend_from_slice(&[e.kind, 0, 0, 0]);
    buf.extend_from_slice(&e.time_ms.to_le_bytes());
    buf.extend_from_slice(&e.latency_us.to_le_bytes());
    for p in parts {
        buf.extend_from_slice(&(p.len() as u32).to_le_bytes());
        buf.extend_from_slice(p);
    }
    RECORDED.fetch_add(1, Ordering::Relaxed);
}

/// Takes every buffered record (the buffer starts again empty).
pub fn drain() -> Vec<u8> {
    let mut buf = BUFFER.lock().unwrap_or_else(|p| p.into_inner());
    std::mem::take(&mut *buf)
}

/// Events recorded and dropped since the process started, and the bytes waiting.
pub fn counts() -> (u64, u64, usize) {
    let waiting = BUFFER.lock().unwrap_or_else(|p| p.into_inner()).len();
    (RECORDED.load(Ordering::Relaxed), DROPPED.load(Ordering::Relaxed), waiting)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(body: &[u8]) -> Event<'_> {
        Event { kind: VERIFY, time_ms: 7, latency_us: 3, workspace_id: b"ws", request_id: b"req", subject: b"api", body, reply: b"{}" }
    }

    #[test]
    fn records_in_the_layout_and_drops_beyond_the_capacity() {
        set(200);
        drain();
        let (_, dropped_before, _) = counts();
        record(&event(b"{\"key\":\"k\"}"));
        let one = HEAD + 4 * 5 + 2 + 3 + 3 + 11 + 2;
        assert_eq!(counts().2, one);
        record(&event(&[b'x'; 150]));
        assert_eq!(counts().1, dropped_before + 1, "beyond the capacity: dropped and counted");
        let taken = drain();
        assert_eq!(taken.len(), one);
        assert_eq!(u32::from_le_bytes(taken[0..4].try_into().unwrap()) as usize, one);
        assert_eq!(taken[4], VERIFY);
        assert_eq!(i64::from_le_bytes(taken[8..16].try_into().unwrap()), 7);
        assert_eq!(&taken[20..24], &2u32.to_le_bytes());
        assert_eq!(&taken[24..26], b"ws");
        assert!(drain().is_empty());
        set(0);
        record(&event(b"{}"));
        assert!(drain().is_empty(), "off: nothing recorded");
    }
}
