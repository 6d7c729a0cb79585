//! The JS-facing side of the native module: the one boundary (`boundary`) that turns errors
//! and Rust panics into JS exceptions with a `code`, argument readers (`args`), and the
//! exports, thin wrappers over plain Rust modules: the store API (`store`), a key's credits
//! and this node's leases of them (`credits`), the analytics events buffer (`events`), the windows a cluster shares through Redis
//! (`windows`), the analytics threads' priority (`threads`) and the hot procedures (`hot`). lib.rs lists them.

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::napi::{self, napi_callback_info, napi_env, napi_value, Env, Status};
use crate::store::StoreError;

mod args;
pub mod credits;
pub mod events;
pub mod hot;
pub mod store;
pub mod threads;
pub mod windows;

pub enum Error {
    Store(StoreError),
    /// A Node-API call failed; `PENDING_EXCEPTION` means a JS exception is on its way.
    Napi(Status),
    Panic(String),
    /// A domain error of a hot procedure: (code, message).
    Coded(&'static str, String),
}

impl From<StoreError> for Error {
    fn from(e: StoreError) -> Error {
        Error::Store(e)
    }
}

impl From<Status> for Error {
    fn from(s: Status) -> Error {
        Error::Napi(s)
    }
}

fn bad(msg: impl Into<String>) -> Error {
    Error::Store(StoreError::BadArgument(msg.into()))
}

/// The error → JS exception mapping (the only one). Codes are part of the JS contract.
fn throw(env: Env, error: Error) {
    let (code, message) = match error {
        Error::Napi(Status(napi::PENDING_EXCEPTION)) => return,
        Error::Napi(_) if env.exception_pending() => return,
        Error::Napi(Status(s)) => (
            "NATIVE_NAPI",
            format!("Node-API call failed with status {s}"),
        ),
        Error::Panic(msg) => ("NATIVE_PANIC", format!("native panic: {msg}")),
        Error::Coded(code, msg) => (code, msg),
        Error::Store(e) => {
            let code = match e {
                StoreError::Closed => "STORE_CLOSED",
                StoreError::NotInTxn => "STORE_NOT_IN_TXN",
                StoreError::NestedTxn(_) => "STORE_NESTED_TXN",
                StoreError::UnknownTable(_) => "STORE_UNKNOWN_TABLE",
                StoreError::BadArgument(_) => "STORE_BAD_ARGUMENT",
                StoreError::RetryMapFull => "STORE_RETRY_MAP_FULL",
                StoreError::Lmdb(..) | StoreError::Os(_) => "STORE_IO",
            };
            (code, e.to_string())
        }
    };
    env.throw_error(code, &message);
}

fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic payload".to_owned()
    }
}

/// Runs an export body with its first `N` arguments. Errors and panics become JS
/// exceptions; the callback then returns NULL (JS sees the exception).
pub fn boundary<const N: usize>(
    env: napi_env,
    info: napi_callback_info,
    body: fn(Env, &[napi_value; N]) -> Result<napi_value, Error>,
) -> napi_value {
    let env = Env(env);
    let result = catch_unwind(AssertUnwindSafe(|| body(env, &env.args::<N>(info)?)))
        .unwrap_or_else(|payload| Err(Error::Panic(panic_message(&*payload))));
    result.unwrap_or_else(|e| {
        throw(env, e);
        std::ptr::null_mut()
    })
}

/// Registration also runs behind catch_unwind (a panic must not cross the C boundary).
pub fn register(
    env: napi_env,
    exports: napi_value,
    table: &[(&std::ffi::CStr, napi::napi_callback)],
) -> napi_value {
    let env = Env(env);
    match catch_unwind(|| napi::register(env, exports, table)) {
        Ok(Ok(exports)) => exports,
        Ok(Err(status)) => {
            throw(env, Error::Napi(status));
            std::ptr::null_mut()
        }
        Err(payload) => {
            throw(env, Error::Panic(panic_message(&*payload)));
            std::ptr::null_mut()
        }
    }
}

