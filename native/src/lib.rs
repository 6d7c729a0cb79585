//! keyward's native module: the export table, and nothing else.
//!
//! The exports are thin wrappers in `api` (`api::store`: the LMDB store API; `api::credits`:
//! credits and, in cluster mode, this node's leases of them; `api::hot`: the
//! hot procedures, one entry each, request bytes and a fixed-layout context in, reply out);
//! each runs behind `api::boundary`, so errors and Rust panics become JS exceptions carrying a
//! `code`. src/engine/native.ts is the TypeScript face of this table
//! (test/engine/contract.test.ts compares the two). The logic lives in plain Rust modules:
//! `store` (the LMDB environment, tables, transactions, group commit), `counterlog` (the
//! counters of the hot calls), `shared` (rate-limit windows a cluster shares through Redis),
//! `verify` and `limit` (the hot procedures), `body` (their
//! request readers), `context` (the hot calls' context layout), `window`, `credits`,
//! `permissions` (pure rules), `groups` (write plans: many checks and writes in one call), `priority` (the analytics threads' priority), `records`/`msgpack` (the stored records' codec), `verified`
//! (the verification cache), `migrate` (store layout upgrades at open), `events`/`event_rows`/`json_read`
//! (analytics events: recorded, then read into rows). `ffi` is the only
//! module that calls foreign code (LMDB, the C library, and the Node-API subset it declares
//! by hand, `ffi::napi`): every `unsafe` of the crate is there.

mod api;
mod body;
mod context;
mod ffi;
mod credits;
mod decisions;
mod event_dims;
mod event_rows;
mod events;
mod migrate;
mod fixed;
mod groups;
mod hash;
mod hot;
mod json;
mod json_read;
mod limit;
mod memo;
mod meta;
mod msgpack;
mod permissions;
mod priority;
mod random;
mod records;
mod reqid;
mod shared;
mod slots;
mod store;
mod verified;
mod verify;
mod window;
mod counterlog;
mod check;

use std::ffi::CStr;

/// `crate::napi`, where the other modules reach the Node-API wrappers.
use ffi::napi;
use napi::{napi_callback, napi_callback_info, napi_env, napi_value};

macro_rules! exports {
    ($($name:literal => $body:path),* $(,)?) => {
        const EXPORTS: &[(&CStr, napi_callback)] = &[$((
            $name,
            {
                extern "C" fn export(env: napi_env, info: napi_callback_info) -> napi_value {
                    api::boundary(env, info, $body)
                }
                export
            },
        )),*];
    };
}

exports! {
    c"open" => api::store::open,
    c"close" => api::store::close,
    c"tables" => api::store::tables,
    c"get" => api::store::get,
    c"getInto" => api::store::get_into,
    c"put" => api::store::put,
    c"del" => api::store::del,
    c"writeGroups" => api::store::write_groups,
    c"range" => api::store::range,
    c"rangePacked" => api::store::range_packed,
    c"eventsSet" => api::events::events_set,
    c"eventsCounts" => api::events::events_counts,
    c"decisionCounts" => api::events::decision_counts,
    c"eventsRows" => api::events::events_rows,
    c"eventsTake" => api::events::events_take,
    c"eventDimsOpen" => api::events::event_dims_open,
    c"eventDimsLearn" => api::events::event_dims_learn,
    c"eventDimsForget" => api::events::event_dims_forget,
    c"eventDimsClose" => api::events::event_dims_close,
    c"transaction" => api::store::transaction,
    c"dryRun" => api::store::dry_run,
    c"sync" => api::store::sync,
    c"stats" => api::store::stats,
    c"warm" => api::store::warm,
    c"rootKeysVersion" => api::store::root_keys_version,
    c"requestId" => api::store::request_id,
    c"sha256Base64" => api::store::sha256_base64,
    c"fillRandom" => api::store::fill_random,
    c"checkStore" => api::store::check_store,
    c"storeInUse" => api::store::store_in_use,
    c"backup" => api::store::backup,
    c"raiseFileLimit" => api::store::raise_file_limit,
    c"creditsGet" => api::credits::credits_get,
    c"creditsSet" => api::credits::credits_set,
    c"creditsDelete" => api::credits::credits_delete,
    c"creditsApply" => api::credits::credits_apply,
    c"leaseGrant" => api::credits::lease_grant,
    c"leaseGiveBack" => api::credits::lease_give_back,
    c"leaseGet" => api::credits::lease_get,
    c"leasesLow" => api::credits::leases_low,
    c"windowsDrain" => api::windows::windows_drain,
    c"windowsTake" => api::windows::windows_take,
    c"windowsLearn" => api::windows::windows_learn,
    c"windowsRelease" => api::windows::windows_release,
    c"setVerifyCache" => api::store::set_verify_cache,
    c"exitProcess" => api::store::exit_process,
    c"threadId" => api::threads::thread_id,
    c"poolThreadIds" => api::threads::pool_thread_ids,
    c"governAnalytics" => api::threads::govern_analytics,
    c"analyticsQueries" => api::threads::analytics_queries,
    c"analyticsIdle" => api::threads::analytics_idle,
    c"_panicForTest" => api::store::panic_for_test,
    c"verifyKey" => api::hot::verify_key,
    c"limit" => api::hot::limit,
    c"multiLimit" => api::hot::multi_limit,
    c"hotBounds" => api::hot::hot_bounds,
    c"findOverride" => api::hot::find_override,
    c"sweepLog" => api::hot::sweep_log,
    c"setGroupCommit" => api::hot::set_group_commit,
    c"batchBegin" => api::hot::batch_begin,
    c"batchCommit" => api::hot::batch_commit,
    c"takeUncommittedRead" => api::hot::take_uncommitted_read,
}

/// Called by Node once per JS context that loads the addon (main thread, each worker), with
/// a live env and exports object.
#[no_mangle]
pub extern "C" fn napi_register_module_v1(env: napi_env, exports: napi_value) -> napi_value {
    api::register(env, exports, EXPORTS)
}

/// The Node-API version this addon is built against.
#[no_mangle]
pub extern "C" fn node_api_module_get_api_version_v1() -> i32 {
    8
}
