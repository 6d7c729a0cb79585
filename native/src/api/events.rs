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
    let rows = event_rows::rows(buffer_arg(env, args[0], "lines")?);
    let value = rows_value(env, &rows);
    event_rows::recycle(rows);
    value
}

/// eventsTake(): EventRows (below) of every buffered event (the buffer starts again empty).
pub fn events_take(env: Env, _: &[napi_value; 0]) -> Result<napi_value, Error> {
    let rows = events::take(event_rows::rows);
    let value = rows_value(env, &rows);
    event_rows::recycle(rows);
    value
}

/// {verifications, ratelimits, unread, minTimeMs}: each table's rows as DuckDB stores them
/// ({columns: one text per column, its values separated by line feeds; rows; escaped: bit i
/// set when column i holds escapes}, event_rows.rs lays them out), how many lines gave none,
/// and the earliest time of a row (Infinity when none).
fn rows_value(env: Env, rows: &event_rows::Rows) -> Result<napi_value, Error> {
    let out = env.object()?;
    for (name, table) in [(c"verifications", &rows.verifications), (c"ratelimits", &rows.ratelimits)] {
        let value = env.object()?;
        let columns = env.array(0)?;
        for i in 0..table.columns() {
            env.set_element(columns, i as u32, env.string_from_utf8(table.separated(i))?)?;
        }
        env.set_named(value, c"columns", columns)?;
        env.set_named(value, c"rows", env.double(f64::from(table.rows))?)?;
        env.set_named(value, c"escaped", env.double(f64::from(table.escaped))?)?;
        env.set_named(out, name, value)?;
    }
    env.set_named(out, c"unread", env.double(f64::from(rows.unread))?)?;
    env.set_named(out, c"minTimeMs", env.double(if rows.min_time == i64::MAX { f64::INFINITY } else { rows.min_time as f64 })?)?;
    Ok(out)
}
