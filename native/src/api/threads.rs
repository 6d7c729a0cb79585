//! The analytics threads' priority (`priority`): src/analytics/worker.ts hands its threads
//! to the governor, src/analytics/host.ts says when queries run.

use std::time::Duration;

use super::args::number_arg;
use super::{bad, Error};
use crate::napi::{napi_value, Env};
use crate::priority;

/// How long `poolThreadIds` waits for the pool's threads to take its jobs.
const POOL_WAIT: Duration = Duration::from_secs(2);

/// threadId() → the calling thread's id (gettid).
pub fn thread_id(env: Env, _: &[napi_value; 0]) -> Result<napi_value, Error> {
    Ok(env.double(crate::ffi::os::thread_id() as f64)?)
}

/// poolThreadIds(threads) → the ids of libuv's pool threads. Blocks the caller until
/// `threads` jobs have started on the pool, or for POOL_WAIT at most.
pub fn pool_thread_ids(env: Env, [threads]: &[napi_value; 1]) -> Result<napi_value, Error> {
    let n = number_arg(env, *threads, "threads")?;
    if !(1.0..=1024.0).contains(&n) || n.fract() != 0.0 {
        return Err(bad("threads must be an integer from 1 to 1024"));
    }
    let ids = priority::pool_thread_ids(n as usize, POOL_WAIT, |job| env.run_on_pool(job))?;
    let out = env.array(ids.len())?;
    for (i, id) in ids.iter().enumerate() {
        env.set_element(out, i as u32, env.double(*id as f64)?)?;
    }
    Ok(out)
}

/// governAnalytics(tid) → whether thread `tid` is now the governor's (false: this process
/// may not take a thread back up from SCHED_IDLE, so nothing is lowered).
pub fn govern_analytics(env: Env, [tid]: &[napi_value; 1]) -> Result<napi_value, Error> {
    let tid = number_arg(env, *tid, "tid")?;
    if tid < 1.0 || tid.fract() != 0.0 || tid > f64::from(i32::MAX) {
        return Err(bad("tid must be a thread id"));
    }
    Ok(env.boolean(priority::govern(tid as i64))?)
}

/// analyticsQueries(delta) with +1 when a query starts, -1 when it ends.
pub fn analytics_queries(env: Env, [delta]: &[napi_value; 1]) -> Result<napi_value, Error> {
    let d = env.get_double(*delta).map_err(|_| bad("delta must be 1 or -1"))?;
    if d != 1.0 && d != -1.0 {
        return Err(bad("delta must be 1 or -1"));
    }
    priority::queries(d as i32);
    Ok(env.undefined()?)
}

/// analyticsIdle() → whether the governed threads run at SCHED_IDLE now.
pub fn analytics_idle(env: Env, _: &[napi_value; 0]) -> Result<napi_value, Error> {
    Ok(env.boolean(priority::idle())?)
}
