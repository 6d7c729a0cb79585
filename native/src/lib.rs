//! keyward's native module: the export table. Logic lives in `store` (LMDB), `hash`
//! (SHA-256) and `api` (argument parsing and the one error boundary); `ffi` is the only
//! module that calls foreign code (LMDB, the C library, and the Node-API subset it declares
//! by hand, `ffi::napi`). Each export runs behind `api::boundary`, so errors and Rust panics
//! become JS exceptions carrying a `code`.

mod api;
mod body;
mod ffi;
mod credits;
mod migrate;
mod fixed;
mod hash;
mod hot;
mod json;
mod limit;
mod memo;
mod meta;
mod msgpack;
mod permissions;
mod records;
mod reqid;
mod slots;
mod store;
mod verified;
mod verify;
mod window;
mod counterlog;

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
    c"open" => api::open,
    c"close" => api::close,
    c"get" => api::get,
    c"getInto" => api::get_into,
    c"put" => api::put,
    c"del" => api::del,
    c"range" => api::range,
    c"transaction" => api::transaction,
    c"sync" => api::sync,
    c"stats" => api::stats,
    c"warm" => api::warm,
    c"rootKeysVersion" => api::root_keys_version,
    c"requestId" => api::request_id,
    c"sha256Base64" => api::sha256_base64,
    c"verifyKey" => api::verify_key,
    c"verifyKeyBody" => api::verify_key_body,
    c"limit" => api::limit,
    c"limitBody" => api::limit_body,
    c"limitMany" => api::limit_many,
    c"sweepLog" => api::sweep_log,
    c"findOverride" => api::find_override,
    c"setGroupCommit" => api::set_group_commit,
    c"setVerifyCache" => api::set_verify_cache,
    c"batchBegin" => api::batch_begin,
    c"batchCommit" => api::batch_commit,
    c"creditsGet" => api::credits_get,
    c"creditsSet" => api::credits_set,
    c"creditsDelete" => api::credits_delete,
    c"exitProcess" => api::exit_process,
    c"_panicForTest" => api::panic_for_test,
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
