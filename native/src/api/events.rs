//! Exports of the analytics events buffer (events.rs).

use super::args::number_arg;
use super::{bad, Error};
use crate::events;
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

/// eventsDrain(): Buffer — every buffered record (events.rs lays them out); empty when none.
pub fn events_drain(env: Env, _: &[napi_value; 0]) -> Result<napi_value, Error> {
    Ok(env.buffer_copy(&events::drain())?)
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
