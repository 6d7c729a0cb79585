//! Exports of the analytics events buffer (events.rs).

use super::args::{buffer_arg, number_arg};
use super::{bad, Error};
use crate::{decisions, event_dims, event_rows, events};
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

/// eventsRows(lines: Buffer, dims): EventRows (below) of a batch of event lines, for the
/// database whose dims are `dims` (eventDimsOpen).
pub fn events_rows(env: Env, args: &[napi_value; 2]) -> Result<napi_value, Error> {
    let lines = buffer_arg(env, args[0], "lines")?;
    let rows = event_dims::with(handle_arg(env, args[1])?, |known| event_rows::rows(lines, known)).ok_or_else(not_open)?;
    let value = rows_value(env, &rows);
    event_rows::recycle(rows);
    value
}

/// eventsTake(dims): EventRows (below) of every buffered event (the buffer starts again
/// empty), for the database whose dims are `dims`.
pub fn events_take(env: Env, args: &[napi_value; 1]) -> Result<napi_value, Error> {
    let rows = event_dims::with(handle_arg(env, args[0])?, |known| events::take(|lines| event_rows::rows(lines, known))).ok_or_else(not_open)?;
    let value = rows_value(env, &rows);
    event_rows::recycle(rows);
    value
}

/// eventDimsOpen(nextVerification, nextRatelimit): a handle to a database's dims (event_dims.rs), none known yet.
pub fn event_dims_open(env: Env, args: &[napi_value; 2]) -> Result<napi_value, Error> {
    let next = [id_arg(env, args[0], "nextVerification")?, id_arg(env, args[1], "nextRatelimit")?];
    Ok(env.double(f64::from(event_dims::open(next)))?)
}

/// eventDimsLearn(dims, table, fields, records: Buffer): the dims a database stored
/// (event_dims.rs `learn`); table 0 verifications, 1 rate limits.
pub fn event_dims_learn(env: Env, args: &[napi_value; 4]) -> Result<napi_value, Error> {
    let handle = handle_arg(env, args[0])?;
    let table = id_arg(env, args[1], "table")? as usize;
    let fields = id_arg(env, args[2], "fields")? as usize;
    if table > 1 || fields == 0 {
        return Err(bad("table must be 0 or 1, and fields at least 1"));
    }
    if !event_dims::learn(handle, table, fields, buffer_arg(env, args[3], "records")?) {
        return Err(bad("the dims are not open, or the records do not read as dims"));
    }
    Ok(env.undefined()?)
}

/// eventDimsForget(dims): drops the dims the last batch read numbered (its transaction failed).
pub fn event_dims_forget(env: Env, args: &[napi_value; 1]) -> Result<napi_value, Error> {
    event_dims::forget(handle_arg(env, args[0])?);
    Ok(env.undefined()?)
}

/// eventDimsClose(dims).
pub fn event_dims_close(env: Env, args: &[napi_value; 1]) -> Result<napi_value, Error> {
    event_dims::close(handle_arg(env, args[0])?);
    Ok(env.undefined()?)
}

fn id_arg(env: Env, value: napi_value, what: &str) -> Result<u32, Error> {
    let n = number_arg(env, value, what)?;
    if !(0.0..=f64::from(u32::MAX)).contains(&n) || n.fract() != 0.0 {
        return Err(bad(format!("{what} must be an integer from 0 to 2^32-1")));
    }
    Ok(n as u32)
}

fn handle_arg(env: Env, value: napi_value) -> Result<u32, Error> {
    id_arg(env, value, "dims")
}

fn not_open() -> Error {
    bad("these analytics dims are closed (eventDimsClose)")
}

/// {verifications, ratelimits, unread, minTimeMs}: each table's rows as DuckDB stores them
/// ({columns: one text per column, its values separated by line feeds; rows; escaped: bit i
/// set when column i holds escapes; dims: the fields of the dims the batch numbered, one
/// after another, 3 a verification's, 4 a limit's; dimIds: their ids}, event_rows.rs lays them out), how
/// many lines gave none, and the earliest time of a row (Infinity when none).
fn rows_value(env: Env, rows: &event_rows::Rows) -> Result<napi_value, Error> {
    let out = env.object()?;
    for (name, table) in [(c"verifications", &rows.verifications), (c"ratelimits", &rows.ratelimits)] {
        let value = env.object()?;
        let columns = env.array(0)?;
        for i in 0..table.columns() {
            env.set_element(columns, i as u32, env.string_from_utf8(table.separated(i))?)?;
        }
        env.set_named(value, c"columns", columns)?;
        let (dims, ids) = (env.array(0)?, env.array(0)?);
        let mut at = 0;
        for (n, (id, fields)) in table.dims.added().enumerate() {
            env.set_element(ids, n as u32, env.double(f64::from(id))?)?;
            for field in fields {
                env.set_element(dims, at, env.string_from_utf8(field)?)?;
                at += 1;
            }
        }
        env.set_named(value, c"dims", dims)?;
        env.set_named(value, c"dimIds", ids)?;
        env.set_named(value, c"rows", env.double(f64::from(table.rows))?)?;
        env.set_named(value, c"escaped", env.double(f64::from(table.escaped))?)?;
        env.set_named(out, name, value)?;
    }
    env.set_named(out, c"unread", env.double(f64::from(rows.unread))?)?;
    env.set_named(out, c"minTimeMs", env.double(if rows.min_time == i64::MAX { f64::INFINITY } else { rows.min_time as f64 })?)?;
    Ok(out)
}
