//! Analytics events of the hot calls (docs/analytics.md): every verifyKey, limit and
//! multiLimit decision that answered leaves one record here, appended by the serving thread
//! that decided it; the analytics worker (src/analytics/worker.ts) takes them all at once
//! (`take`, read into rows by event_rows.rs) and writes them to DuckDB. The serving thread only copies a few hundred bytes
//! under a lock nobody holds for longer than a copy: parsing and writing happen off it.
//!
//! The buffer is bounded (`set`): a record that does not fit is dropped and counted, so a
//! worker that falls behind costs events, never memory without bound (the buffer, and the
//! one `take` read last: at most twice the capacity).
//!
//! A record is one line of JSON, so that DuckDB reads a whole batch in one statement
//! (src/analytics/database.ts) and no JavaScript runs per event:
//!
//! `{"k":KIND,"t":TIME,"l":LATENCY,"w":WORKSPACE,"r":REQUEST_ID,"s":SUBJECT,"b":BODY,"p":REPLY}\n`
//!
//! KIND 1 verifyKey, 2 limit, 3 multiLimit; TIME the ms since the epoch the call decided at;
//! LATENCY the µs it spent deciding (inside the engine); SUBJECT the API the verified key
//! belongs to (empty: no key of the caller's), or the namespace ids of a limit / multiLimit,
//! in the request's order, joined by '\n'; BODY the JSON request the call read, REPLY the
//! whole success envelope it answered (both JSON as they were).

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

use crate::ffi::os;
use crate::json;

pub const VERIFY: u8 = 1;
pub const LIMIT: u8 = 2;
pub const MULTI_LIMIT: u8 = 3;

static ON: AtomicBool = AtomicBool::new(false);
static CAPACITY: AtomicUsize = AtomicUsize::new(0);
static DROPPED: AtomicU64 = AtomicU64::new(0);
static RECORDED: AtomicU64 = AtomicU64::new(0);
/// The time of the oldest record waiting (the first appended since the last `take`); 0: none.
static WAITING_SINCE: AtomicI64 = AtomicI64::new(0);
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

/// Appends `e`, or counts it dropped when the buffer is full (or recording is off). The
/// line is written in place, under the lock: no allocation or second copy per event.
pub fn record(e: &Event<'_>) {
    let mut buf = BUFFER.lock().unwrap_or_else(|p| p.into_inner());
    let start = buf.len();
    let line = &mut *buf;
    json::raw(line, "{\"k\":");
    json::int(line, i64::from(e.kind));
    json::raw(line, ",\"t\":");
    json::int(line, e.time_ms);
    json::raw(line, ",\"l\":");
    json::int(line, i64::from(e.latency_us));
    for (name, value) in [(",\"w\":", e.workspace_id), (",\"r\":", e.request_id), (",\"s\":", e.subject)] {
        json::raw(line, name);
        json::string(line, value);
    }
    json::raw(line, ",\"b\":");
    let body_at = line.len();
    line.extend_from_slice(e.body);
    // The body's line feeds (white space between its JSON tokens, as a pretty-printed body or a
    // trailing newline has them: inside a string one is escaped) would cut the line in two;
    // a space reads the same.
    let mut at = body_at;
    while let Some(i) = os::memchr(&line[at..], b'\n') {
        line[at + i] = b' ';
        at += i + 1;
    }
    json::raw(line, ",\"p\":");
    line.extend_from_slice(e.reply);
    json::raw(line, "}\n");
    // Counted in rows, as the tables keep them and the worker counts what it wrote: a
    // multiLimit's limits (its subject's namespace ids) are one each.
    let rows = if e.kind == MULTI_LIMIT { 1 + e.subject.iter().filter(|&&b| b == b'\n').count() as u64 } else { 1 };
    if !on() || buf.len() > CAPACITY.load(Ordering::Relaxed) {
        buf.truncate(start);
        DROPPED.fetch_add(rows, Ordering::Relaxed);
        return;
    }
    if start == 0 {
        WAITING_SINCE.store(e.time_ms.max(1), Ordering::Relaxed);
    }
    RECORDED.fetch_add(rows, Ordering::Relaxed);
}

/// The time (ms since the epoch) of the oldest record waiting for `take`, if any.
pub fn waiting_since() -> Option<i64> {
    Some(WAITING_SINCE.load(Ordering::Relaxed)).filter(|&t| t > 0)
}

/// The drained buffer of the last `take`: it and the buffer trade places at each take, so
/// in a steady flow neither grows (nor copies itself growing) on the way.
static SPARE: Mutex<Vec<u8>> = Mutex::new(Vec::new());

/// Calls `f` with every buffered record (the buffer starts again empty).
pub fn take<R>(f: impl FnOnce(&[u8]) -> R) -> R {
    let mut spare = SPARE.lock().unwrap_or_else(|p| p.into_inner());
    spare.clear();
    {
        let mut buffer = BUFFER.lock().unwrap_or_else(|p| p.into_inner());
        std::mem::swap(&mut *buffer, &mut *spare);
        WAITING_SINCE.store(0, Ordering::Relaxed);
    }
    let out = f(&spare);
    // A burst's size is not kept for good.
    if spare.capacity() > 2 * spare.len().max(1 << 20) {
        spare.clear();
        spare.shrink_to(1 << 20);
    }
    out
}

/// Takes every buffered record (the buffer starts again empty).
#[cfg(test)]
pub fn drain() -> Vec<u8> {
    take(<[u8]>::to_vec)
}

/// Events (rows: a multiLimit's limits one each) recorded and dropped since the process started, and the bytes waiting.
pub fn counts() -> (u64, u64, usize) {
    let waiting = BUFFER.lock().unwrap_or_else(|p| p.into_inner()).len();
    (RECORDED.load(Ordering::Relaxed), DROPPED.load(Ordering::Relaxed), waiting)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(body: &[u8]) -> Event<'_> {
        Event { kind: VERIFY, time_ms: 7, latency_us: 3, workspace_id: b"ws", request_id: b"req", subject: b"a\nb", body, reply: b"{}" }
    }

    #[test]
    fn records_json_lines_and_drops_beyond_the_capacity() {
        // One test: the buffer is the process's.
        set(200);
        drain();
        let (_, dropped_before, _) = counts();
        record(&event(b"{\"key\":\"k\"}"));
        let line = "{\"k\":1,\"t\":7,\"l\":3,\"w\":\"ws\",\"r\":\"req\",\"s\":\"a\\nb\",\"b\":{\"key\":\"k\"},\"p\":{}}\n";
        assert_eq!(counts().2, line.len());
        assert_eq!(waiting_since(), Some(7), "the oldest record waiting");
        record(&event(&[b'x'; 150]));
        assert_eq!(counts().1, dropped_before + 1, "beyond the capacity: dropped and counted");
        assert_eq!(String::from_utf8(drain()).unwrap(), line);
        assert_eq!(waiting_since(), None, "taken: nothing waits");
        assert!(drain().is_empty());
        let (recorded_before, _, _) = counts();
        record(&Event { kind: MULTI_LIMIT, subject: b"ns_a\nns_b\nns_c", ..event(b"{}") });
        assert_eq!(counts().0, recorded_before + 3, "a multiLimit's limits are one row each");
        drain();
        // A body's line feeds between its tokens (pretty-printed, a trailing newline) become spaces: still one line.
        record(&event(b"{\n  \"key\": \"k\",\r\n  \"tags\": [\"a\\nb\"]\n}\n"));
        let line = "{\"k\":1,\"t\":7,\"l\":3,\"w\":\"ws\",\"r\":\"req\",\"s\":\"a\\nb\",\"b\":{   \"key\": \"k\",\r   \"tags\": [\"a\\nb\"] } ,\"p\":{}}\n";
        assert_eq!(String::from_utf8(drain()).unwrap(), line);
        set(0);
        record(&event(b"{}"));
        assert!(drain().is_empty(), "off: nothing recorded");
    }
}
