//! Readers of export arguments. Keys are a string (its UTF-8 bytes) or a Buffer, at most 511
//! bytes, read into a stack buffer or borrowed from the Buffer; values are Buffers.

use std::borrow::Cow;
use std::path::Path;

use super::{bad, Error};
use crate::napi::{self, napi_value, Env, Status, ValueType};
use crate::store::{StoreError, Table, MAX_KEY_BYTES};

/// Stack room for a key: 511 bytes + 4 (one more character) + 1 (NUL written by Node).
pub const KEY_STACK: usize = MAX_KEY_BYTES + 5;

/// A key or range bound: string (UTF-8) into `stack`, or a Buffer borrowed from JS.
/// Strings longer than 511 bytes are rejected here; emptiness is checked by `store`.
pub fn bytes_arg<'a>(env: Env, value: napi_value, stack: &'a mut [u8; KEY_STACK], what: &str) -> Result<&'a [u8], Error> {
    match env.utf8_into(value, stack) {
        Ok(n) if n <= MAX_KEY_BYTES => Ok(&stack[..n]),
        Ok(_) => Err(bad(format!("{what} is longer than {MAX_KEY_BYTES} bytes"))),
        Err(Status(napi::STRING_EXPECTED)) if env.is_buffer(value)? => {
            // The Buffer is an argument of this call and no JS runs while it is used.
            Ok(env.buffer_bytes(value)?)
        }
        Err(Status(napi::STRING_EXPECTED)) => Err(bad(format!("{what} must be a string or Buffer"))),
        Err(status) => Err(status.into()),
    }
}

pub fn key_id_arg<'a>(env: Env, value: napi_value, stack: &'a mut [u8; KEY_STACK]) -> Result<&'a [u8], Error> {
    bytes_arg(env, value, stack, "keyId")
}

pub fn table_arg(env: Env, value: napi_value) -> Result<Table, Error> {
    let mut buf = [0u8; 32];
    let n = match env.utf8_into(value, &mut buf) {
        Ok(n) => n,
        Err(Status(napi::STRING_EXPECTED)) => return Err(bad("table name must be a string")),
        Err(status) => return Err(status.into()),
    };
    Table::from_name(&buf[..n]).ok_or_else(|| StoreError::UnknownTable(String::from_utf8_lossy(&buf[..n]).into_owned()).into())
}

/// The bytes of a Buffer (or Uint8Array) argument, borrowed for the call.
pub fn buffer_arg<'a>(env: Env, value: napi_value, what: &str) -> Result<&'a [u8], Error> {
    if !env.is_buffer(value)? {
        return Err(bad(format!("{what} must be a Buffer")));
    }
    // The Buffer is an argument of this call and no JS runs while it is used.
    Ok(env.buffer_bytes(value)?)
}

/// The bytes of a Buffer argument the export writes into.
pub fn buffer_mut_arg<'a>(env: Env, value: napi_value, what: &str) -> Result<&'a mut [u8], Error> {
    if !env.is_buffer(value)? {
        return Err(bad(format!("{what} must be a Buffer")));
    }
    // The Buffer is an argument of this call; no JS runs while it is written. The caller
    // makes sure no other argument of the call is read through it (api::hot::hot_args).
    Ok(env.buffer_bytes_mut(value)?)
}

pub fn number_arg(env: Env, value: napi_value, what: &str) -> Result<f64, Error> {
    match env.get_double(value) {
        Ok(n) if n >= 0.0 && !n.is_nan() => Ok(n),
        Ok(_) | Err(Status(napi::NUMBER_EXPECTED)) => Err(bad(format!("{what} must be a non-negative number"))),
        Err(status) => Err(status.into()),
    }
}

pub fn int_arg(env: Env, value: napi_value, what: &str) -> Result<i64, Error> {
    match env.get_double(value) {
        Ok(n) if n.is_finite() && n.fract() == 0.0 && n.abs() <= 9_007_199_254_740_991.0 => Ok(n as i64),
        Ok(_) | Err(Status(napi::NUMBER_EXPECTED)) => Err(bad(format!("{what} must be a safe integer"))),
        Err(status) => Err(status.into()),
    }
}

pub fn bool_arg(env: Env, value: napi_value, what: &str) -> Result<bool, Error> {
    match env.get_bool(value) {
        Ok(b) => Ok(b),
        Err(Status(napi::BOOLEAN_EXPECTED)) => Err(bad(format!("{what} must be a boolean"))),
        Err(status) => Err(status.into()),
    }
}

/// An optional boolean argument: `default` when undefined.
pub fn optional_bool_arg(env: Env, value: napi_value, what: &str, default: bool) -> Result<bool, Error> {
    match env.type_of(value)? {
        ValueType::Undefined => Ok(default),
        _ => bool_arg(env, value, what),
    }
}

/// A whole string of any length: stack buffer when it fits, heap otherwise; None when the
/// argument is not a string.
pub fn with_string_bytes<R>(env: Env, value: napi_value, f: impl FnOnce(&[u8]) -> R) -> Result<Option<R>, Error> {
    let mut stack = [0u8; 256];
    let n = match env.utf8_into(value, &mut stack) {
        Ok(n) => n,
        Err(Status(napi::STRING_EXPECTED)) => return Ok(None),
        Err(status) => return Err(status.into()),
    };
    if n <= stack.len() - 5 {
        return Ok(Some(f(&stack[..n])));
    }
    let mut heap = vec![0u8; env.utf8_len(value)? + 1];
    let n = env.utf8_into(value, &mut heap)?;
    Ok(Some(f(&heap[..n])))
}

/// `f` with a directory argument: a non-empty string (UTF-8), else a STORE_BAD_ARGUMENT.
pub fn with_dir<T>(env: Env, value: napi_value, f: impl FnOnce(&Path) -> Result<T, Error>) -> Result<T, Error> {
    with_string_bytes(env, value, |dir| match std::str::from_utf8(dir) {
        Ok(dir) if !dir.is_empty() => f(Path::new(dir)),
        _ => Err(bad("dir must be a non-empty path")),
    })?
    .ok_or_else(|| bad("dir must be a string"))?
}

/// A string argument: into `stack` when it fits, else onto the heap.
pub fn str_arg<'s>(env: Env, value: napi_value, stack: &'s mut [u8], what: &str) -> Result<Cow<'s, str>, Error> {
    let n = match env.utf8_into(value, stack) {
        Ok(n) => n,
        Err(Status(napi::STRING_EXPECTED)) => return Err(bad(format!("{what} must be a string"))),
        Err(status) => return Err(status.into()),
    };
    if n + 5 <= stack.len() {
        let s = std::str::from_utf8(&stack[..n]).map_err(|_| bad(format!("{what} is not UTF-8")))?;
        return Ok(Cow::Borrowed(s));
    }
    let mut heap = vec![0u8; env.utf8_len(value)? + 1];
    let n = env.utf8_into(value, &mut heap)?;
    heap.truncate(n);
    String::from_utf8(heap).map(Cow::Owned).map_err(|_| bad(format!("{what} is not UTF-8")))
}
