//! Exports of the analytics events buffer (events.rs).

use super::args::{buffer_arg, number_arg};
use super::{bad, Error};
use crate::{decisions, event_rows, events};
use crate::napi::{napi_value, Env};

/// eventsSet(capacityBytes): undefined — records events into a buffer of at most that many
/// bytes; 0 turns recording off.
pub fn events_set(env: Env, args: &[napi_value; 1]) -> Result<napi_value, Error> {
    let capacity = number_arg(env, args[0], "capacityBytes")?;
    if !(0.0..=(1u64 << 40) as f64).contains(&capacity) {
        return Err(bad("capacityBytes must be between 0 and 2^40"));
    }
    events::set(capacity as usize);
    Ok(env.undefined()?)
}

/// eventsCounts(): [recorded, dropped, waitingBytes] since the process started.
pub fn events_counts(env: Env, _: &[napi_value; 0]) -> Result<napi_value, Error> {
    let (recorded, dropped, waiting) = events::counts();
    let out = env.array(3)?;
    for (i, n) in [recorded as f64, dropped as f64, waiting as f64].into_iter().enumerate() {
        env.set_element(out, i as u32, env.double(n)?)?;
    }
    Ok(out)
}

/// decisionCounts(): {outcomes: {VALID: n, …every keys.verifyKey code}, passed, refused,
/// creditsSpent} since the process started (decisions.rs).
pub fn decision_counts(env: Env, _: &[napi_value; 0]) -> Result<napi_value, Error> {
    let (verified, passed, refused, spent) = decisions::counts();
    let outcomes = env.object()?;
    for (name, n) in decisions::OUTCOMES.iter().zip(verified) {
        env.set_named(outcomes, name, env.double(n as f64)?)?;
    }
    let out = env.object()?;
    env.set_named(out, c"outcomes", outcomes)?;
    env.set_named(out, c"passed", env.double(passed as f64)?)?;
    env.set_named(out, c"refused", env.double(refused as f64)?)?;
    env.set_named(out, c"creditsSpent", env.double(spent as f64)?)?;
    Ok(out)
}

/// eventsRows(lines: Buffer): EventRows (below) of a batch of event lines.
pub fn events_rows(env: Env, args: &[napi_value; 1]) -> Result<napi_value, Error> {
    rows_value(env, &event_rows::rows(buffer_arg(env, args[0], "lines")?))
}

/// eventsTake(): EventRows (below) of every buffered event (the buffer starts again empty).
pub fn events_take(env: Env, _: &[napi_value; 0]) -> Result<napi_value, Error> {
    let rows = events::take(event_rows::rows);
    rows_value(env, &rows)
}

/// [verifications, ratelimits, verificationRows, ratelimitRows, unread, minTime]: the rows
/// as DuckDB stores them (event_rows.rs lays them out), how many of each, how many lines
/// gave none, and the earliest time of a row (Infinity when none).
fn rows_value(env: Env, rows: &event_rows::Rows) -> Result<napi_value, Error> {
    let out = env.array(6)?;
    env.set_element(out, 0, env.string_from_utf8(&rows.verifications)?)?;
    env.set_element(out, 1, env.string_from_utf8(&rows.ratelimits)?)?;
    env.set_element(out, 2, env.double(event_rows::count(&rows.verifications) as f64)?)?;
    env.set_element(out, 3, env.double(event_rows::count(&rows.ratelimits) as f64)?)?;
    env.set_element(out, 4, env.double(f64::from(rows.unread))?)?;
    env.set_element(out, 5, env.double(if rows.min_time == i64::MAX { f64::INFINITY } else { rows.min_time as f64 })?)?;
    Ok(out)
}
