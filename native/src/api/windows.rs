//! Exports of the rate-limit windows a cluster shares through Redis (shared.rs), for
//! src/cluster/windows.ts: the batches it pushes and what Redis answered. Buffers hold fixed
//! records of a counter's 16-byte name and little-endian i64 fields.

use super::args::{buffer_arg, int_arg};
use super::{bad, Error};
use crate::counterlog::Key;
use crate::napi::{napi_value, Env};
use crate::shared;

const DRAINED_BYTES: usize = 16 + 5 * 8;
const LEARNT_BYTES: usize = 16 + 5 * 8;
const BUCKET_BYTES: usize = 16 + 3 * 8;

fn i64_at(b: &[u8], at: usize) -> i64 {
    i64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

fn key_at(b: &[u8], at: usize) -> Key {
    b[at..at + 16].try_into().expect("16 bytes")
}

/// windowsDrain(nowMs): Buffer — the buckets to push or ask Redis for (shared::drain), each
/// `name(16) seq duration pending returned grantOf` (56 bytes): admissions to add to Redis's
/// count and an unused grant to take off it, both taken, and the limit to ask a grant of (0:
/// none).
pub fn windows_drain(env: Env, args: &[napi_value; 1]) -> Result<napi_value, Error> {
    let now_ms = int_arg(env, args[0], "nowMs")?;
    let drained = shared::drain(now_ms);
    let mut out = Vec::with_capacity(drained.len() * DRAINED_BYTES);
    for d in drained {
        out.extend_from_slice(&d.key);
        for v in [d.seq, d.duration_ms, d.pending, d.returned, d.grant_of] {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
    Ok(env.buffer_copy(&out)?)
}

/// windowsTake(records: Buffer): Buffer — for sync checks: this node's pending counts of the
/// buckets `name(16) seq duration cost` (40 bytes each; admissions while Redis was away), taken
/// (they go to Redis with the check):
/// one i64 LE each. Each bucket is released (windowsRelease) once the call answered.
pub fn windows_take(env: Env, args: &[napi_value; 1]) -> Result<napi_value, Error> {
    let out: Vec<u8> = bucket_records(env, args[0])?.iter().flat_map(|(key, seq, duration, cost)| shared::take(key, *seq, *duration, *cost).to_le_bytes()).collect();
    Ok(env.buffer_copy(&out)?)
}

/// windowsLearn(records: Buffer, atMs): void — what Redis said at `atMs`, each record
/// `name(16) seq duration others othersPrevious admitted` (56 bytes; shared::learn): the
/// other nodes' counts of the bucket and of the one before.
pub fn windows_learn(env: Env, args: &[napi_value; 2]) -> Result<napi_value, Error> {
    let b = buffer_arg(env, args[0], "records")?;
    let at_ms = int_arg(env, args[1], "atMs")?;
    if b.len() % LEARNT_BYTES != 0 {
        return Err(bad(format!("records must be {LEARNT_BYTES} bytes each")));
    }
    for r in b.chunks_exact(LEARNT_BYTES) {
        let [seq, duration, others, previous, admitted] = [16, 24, 32, 40, 48].map(|at| i64_at(r, at));
        if duration <= 0 || others < 0 || previous < 0 || admitted < 0 {
            return Err(bad("a learnt window's duration must be > 0 and its counts ≥ 0"));
        }
        shared::learn(&key_at(r, 0), &shared::Learnt { seq, duration_ms: duration, others, others_previous: previous, admitted, at_ms });
    }
    Ok(env.undefined()?)
}

/// windowsRelease(records: Buffer): void — the buckets `name(16) seq duration cost` (40 bytes each)
/// a call checked with Redis (windowsTake), released once it answered (shared::release).
pub fn windows_release(env: Env, args: &[napi_value; 1]) -> Result<napi_value, Error> {
    for (key, seq, duration, cost) in bucket_records(env, args[0])? {
        shared::release(&key, seq, duration, cost);
    }
    Ok(env.undefined()?)
}

/// The bucket records `name(16) seq duration cost` of `records`: a call's window and its cost.
fn bucket_records(env: Env, records: napi_value) -> Result<Vec<(Key, i64, i64, i64)>, Error> {
    let b = buffer_arg(env, records, "records")?;
    if b.len() % BUCKET_BYTES != 0 {
        return Err(bad(format!("records must be {BUCKET_BYTES} bytes each")));
    }
    b.chunks_exact(BUCKET_BYTES)
        .map(|r| {
            let (seq, duration, cost) = (i64_at(r, 16), i64_at(r, 24), i64_at(r, 32));
            if duration <= 0 || cost < 0 {
                return Err(bad("a window's duration must be > 0 and a cost ≥ 0"));
            }
            Ok((key_at(r, 0), seq, duration, cost))
        })
        .collect()
}
