//! The Node-API subset keyward uses, declared by hand (js_native_api.h / node_api.h), and
//! tiny safe wrappers. The symbols resolve from the node binary when the addon is loaded.
//!
//! Wrappers return `Err(Status)` for any status other than `napi_ok`; `PENDING_EXCEPTION`
//! means a JS exception is already pending and must be left to propagate.

#![allow(non_camel_case_types)]

use std::ffi::{c_char, c_void, CStr};
use std::ptr;

#[repr(C)]
pub struct napi_env__ {
    _private: [u8; 0],
}
#[repr(C)]
pub struct napi_value__ {
    _private: [u8; 0],
}
#[repr(C)]
pub struct napi_callback_info__ {
    _private: [u8; 0],
}

pub type napi_env = *mut napi_env__;
pub type napi_value = *mut napi_value__;
pub type napi_callback_info = *mut napi_callback_info__;
/// `napi_status` is a C enum (int-sized).
pub type napi_status = i32;
pub type napi_valuetype = i32;
pub type napi_callback = unsafe extern "C" fn(napi_env, napi_callback_info) -> napi_value;
#[repr(C)]
pub struct napi_async_work__ {
    _private: [u8; 0],
}
pub type napi_async_work = *mut napi_async_work__;
type napi_async_execute_callback = unsafe extern "C" fn(napi_env, *mut c_void);
type napi_async_complete_callback = unsafe extern "C" fn(napi_env, napi_status, *mut c_void);

pub const OK: napi_status = 0;
pub const STRING_EXPECTED: napi_status = 3;
pub const NUMBER_EXPECTED: napi_status = 6;
pub const BOOLEAN_EXPECTED: napi_status = 7;
pub const PENDING_EXCEPTION: napi_status = 10;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(i32)]
pub enum ValueType {
    Undefined = 0,
    Null = 1,
    Boolean = 2,
    Number = 3,
    String = 4,
    Symbol = 5,
    Object = 6,
    Function = 7,
    External = 8,
    BigInt = 9,
}

extern "C" {
    fn napi_create_function(
        env: napi_env,
        utf8name: *const c_char,
        length: usize,
        cb: napi_callback,
        data: *mut c_void,
        result: *mut napi_value,
    ) -> napi_status;
    fn napi_get_cb_info(
        env: napi_env,
        cbinfo: napi_callback_info,
        argc: *mut usize,
        argv: *mut napi_value,
        this_arg: *mut napi_value,
        data: *mut *mut c_void,
    ) -> napi_status;
    fn napi_get_value_string_utf8(
        env: napi_env,
        value: napi_value,
        buf: *mut c_char,
        bufsize: usize,
        result: *mut usize,
    ) -> napi_status;
    fn napi_create_string_utf8(
        env: napi_env,
        str: *const c_char,
        length: usize,
        result: *mut napi_value,
    ) -> napi_status;
    fn napi_create_string_latin1(
        env: napi_env,
        str: *const c_char,
        length: usize,
        result: *mut napi_value,
    ) -> napi_status;
    fn napi_is_buffer(env: napi_env, value: napi_value, result: *mut bool) -> napi_status;
    fn napi_get_buffer_info(
        env: napi_env,
        value: napi_value,
        data: *mut *mut c_void,
        length: *mut usize,
    ) -> napi_status;
    fn napi_create_buffer_copy(
        env: napi_env,
        length: usize,
        data: *const c_void,
        result_data: *mut *mut c_void,
        result: *mut napi_value,
    ) -> napi_status;
    fn napi_typeof(env: napi_env, value: napi_value, result: *mut napi_valuetype) -> napi_status;
    fn napi_get_undefined(env: napi_env, result: *mut napi_value) -> napi_status;
    fn napi_get_null(env: napi_env, result: *mut napi_value) -> napi_status;
    fn napi_get_boolean(env: napi_env, value: bool, result: *mut napi_value) -> napi_status;
    fn napi_get_value_bool(env: napi_env, value: napi_value, result: *mut bool) -> napi_status;
    fn napi_get_value_double(env: napi_env, value: napi_value, result: *mut f64) -> napi_status;
    fn napi_create_double(env: napi_env, value: f64, result: *mut napi_value) -> napi_status;
    fn napi_create_int64(env: napi_env, value: i64, result: *mut napi_value) -> napi_status;
    fn napi_create_object(env: napi_env, result: *mut napi_value) -> napi_status;
    fn napi_set_named_property(
        env: napi_env,
        object: napi_value,
        utf8name: *const c_char,
        value: napi_value,
    ) -> napi_status;
    fn napi_create_array_with_length(
        env: napi_env,
        length: usize,
        result: *mut napi_value,
    ) -> napi_status;
    fn napi_set_element(
        env: napi_env,
        object: napi_value,
        index: u32,
        value: napi_value,
    ) -> napi_status;
    fn napi_call_function(
        env: napi_env,
        recv: napi_value,
        func: napi_value,
        argc: usize,
        argv: *const napi_value,
        result: *mut napi_value,
    ) -> napi_status;
    fn napi_throw(env: napi_env, error: napi_value) -> napi_status;
    fn napi_create_error(
        env: napi_env,
        code: napi_value,
        msg: napi_value,
        result: *mut napi_value,
    ) -> napi_status;
    fn napi_is_exception_pending(env: napi_env, result: *mut bool) -> napi_status;
    fn napi_get_and_clear_last_exception(env: napi_env, result: *mut napi_value) -> napi_status;
    fn napi_create_async_work(
        env: napi_env,
        async_resource: napi_value,
        async_resource_name: napi_value,
        execute: napi_async_execute_callback,
        complete: napi_async_complete_callback,
        data: *mut c_void,
        result: *mut napi_async_work,
    ) -> napi_status;
    fn napi_queue_async_work(env: napi_env, work: napi_async_work) -> napi_status;
    fn napi_delete_async_work(env: napi_env, work: napi_async_work) -> napi_status;
}

/// A job for libuv's thread pool (`Env::run_on_pool`) and the work item that carries it.
struct PoolJob {
    job: Option<Box<dyn FnOnce() + Send>>,
    work: napi_async_work,
}

/// Runs on a pool thread: no Node-API call is allowed here. A panic stays inside the job.
unsafe extern "C" fn pool_execute(_env: napi_env, data: *mut c_void) {
    // SAFETY: `data` is the PoolJob boxed by run_on_pool; only this callback touches `job`
    // until `pool_complete`, which libuv runs after it.
    let pool_job = unsafe { &mut *data.cast::<PoolJob>() };
    if let Some(job) = pool_job.job.take() {
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
    }
}

/// Runs on the JS thread once the job ran (or was cancelled): frees the work item and the box.
unsafe extern "C" fn pool_complete(env: napi_env, _status: napi_status, data: *mut c_void) {
    // SAFETY: `data` is the PoolJob boxed by run_on_pool, freed here only, once.
    let pool_job = unsafe { Box::from_raw(data.cast::<PoolJob>()) };
    // SAFETY: the work item was created on this env and is not used after this.
    unsafe { napi_delete_async_work(env, pool_job.work) };
}

/// A non-ok `napi_status`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Status(pub napi_status);

fn ok(status: napi_status) -> Result<(), Status> {
    if status == OK {
        Ok(())
    } else {
        Err(Status(status))
    }
}

/// The `napi_env` of the current call. Only valid on its own thread, during that call.
#[derive(Clone, Copy)]
pub struct Env(pub napi_env);

macro_rules! out {
    ($env:expr, $f:ident $(, $arg:expr)*) => {{
        let mut result = ptr::null_mut();
        // SAFETY: `$env` is the live env of the current call; result is an out-pointer.
        ok(unsafe { $f($env.0 $(, $arg)*, &mut result) }).map(|()| result)
    }};
}

impl Env {
    /// The first `N` arguments of the call; missing ones are `undefined`.
    pub fn args<const N: usize>(self, info: napi_callback_info) -> Result<[napi_value; N], Status> {
        let mut argv = [ptr::null_mut(); N];
        let mut argc = N;
        // SAFETY: argv has room for argc values.
        ok(unsafe {
            napi_get_cb_info(
                self.0,
                info,
                &mut argc,
                argv.as_mut_ptr(),
                ptr::null_mut(),
                ptr::null_mut(),
            )
        })?;
        Ok(argv)
    }

    pub fn undefined(self) -> Result<napi_value, Status> {
        out!(self, napi_get_undefined)
    }

    #[allow(dead_code)] // for the hot procedures
    pub fn null(self) -> Result<napi_value, Status> {
        out!(self, napi_get_null)
    }

    pub fn boolean(self, value: bool) -> Result<napi_value, Status> {
        out!(self, napi_get_boolean, value)
    }

    pub fn double(self, value: f64) -> Result<napi_value, Status> {
        out!(self, napi_create_double, value)
    }

    #[allow(dead_code)] // for the hot procedures
    pub fn int64(self, value: i64) -> Result<napi_value, Status> {
        out!(self, napi_create_int64, value)
    }

    pub fn string(self, s: &str) -> Result<napi_value, Status> {
        self.string_from_utf8(s.as_bytes())
    }

    /// A JS string from UTF-8 bytes (V8 replaces invalid sequences with U+FFFD). ASCII text
    /// is the same in Latin-1, which V8 copies without decoding.
    pub fn string_from_utf8(self, s: &[u8]) -> Result<napi_value, Status> {
        if s.is_ascii() {
            out!(self, napi_create_string_latin1, s.as_ptr().cast(), s.len())
        } else {
            out!(self, napi_create_string_utf8, s.as_ptr().cast(), s.len())
        }
    }

    /// A new Buffer holding a copy of `bytes`.
    pub fn buffer_copy(self, bytes: &[u8]) -> Result<napi_value, Status> {
        out!(
            self,
            napi_create_buffer_copy,
            bytes.len(),
            bytes.as_ptr().cast(),
            ptr::null_mut()
        )
    }

    pub fn object(self) -> Result<napi_value, Status> {
        out!(self, napi_create_object)
    }

    pub fn set_named(
        self,
        object: napi_value,
        name: &CStr,
        value: napi_value,
    ) -> Result<(), Status> {
        // SAFETY: name is NUL-terminated; values belong to this env.
        ok(unsafe { napi_set_named_property(self.0, object, name.as_ptr(), value) })
    }

    pub fn array(self, len: usize) -> Result<napi_value, Status> {
        out!(self, napi_create_array_with_length, len)
    }

    pub fn set_element(
        self,
        array: napi_value,
        index: u32,
        value: napi_value,
    ) -> Result<(), Status> {
        // SAFETY: values belong to this env.
        ok(unsafe { napi_set_element(self.0, array, index, value) })
    }

    pub fn type_of(self, value: napi_value) -> Result<ValueType, Status> {
        let mut t = 0;
        // SAFETY: out-pointer.
        ok(unsafe { napi_typeof(self.0, value, &mut t) })?;
        Ok(match t {
            0 => ValueType::Undefined,
            1 => ValueType::Null,
            2 => ValueType::Boolean,
            3 => ValueType::Number,
            4 => ValueType::String,
            5 => ValueType::Symbol,
            6 => ValueType::Object,
            7 => ValueType::Function,
            8 => ValueType::External,
            _ => ValueType::BigInt,
        })
    }

    /// Runs `job` once on a thread of libuv's thread pool (Node's, shared by every thread
    /// of the process), not on this one; nothing comes back to JS.
    pub fn run_on_pool(self, job: Box<dyn FnOnce() + Send>) -> Result<(), Status> {
        let name = self.string("keyward")?;
        let data = Box::into_raw(Box::new(PoolJob { job: Some(job), work: ptr::null_mut() }));
        let mut work = ptr::null_mut();
        // SAFETY: the callbacks match Node-API's types; `data` stays alive until pool_complete.
        let created = ok(unsafe {
            napi_create_async_work(self.0, ptr::null_mut(), name, pool_execute, pool_complete, data.cast(), &mut work)
        });
        if let Err(status) = created {
            // SAFETY: not handed to Node: freed here, once.
            drop(unsafe { Box::from_raw(data) });
            return Err(status);
        }
        // SAFETY: no callback runs before the work is queued, below.
        unsafe { (*data).work = work };
        // SAFETY: `work` was created on this env.
        let queued = ok(unsafe { napi_queue_async_work(self.0, work) });
        if queued.is_err() {
            // SAFETY: never queued, so no callback will free them.
            unsafe {
                napi_delete_async_work(self.0, work);
                drop(Box::from_raw(data));
            }
        }
        queued
    }

    /// `BOOLEAN_EXPECTED` if `value` is not a boolean.
    pub fn get_bool(self, value: napi_value) -> Result<bool, Status> {
        let mut b = false;
        // SAFETY: out-pointer.
        ok(unsafe { napi_get_value_bool(self.0, value, &mut b) })?;
        Ok(b)
    }

    /// `NUMBER_EXPECTED` if `value` is not a number.
    pub fn get_double(self, value: napi_value) -> Result<f64, Status> {
        let mut d = 0.0;
        // SAFETY: out-pointer.
        ok(unsafe { napi_get_value_double(self.0, value, &mut d) })?;
        Ok(d)
    }

    /// Copies the UTF-8 of string `value` into `buf` (no NUL kept) and returns the bytes
    /// copied. Never splits a character; if the result is `<= buf.len() - 5`, the string was
    /// copied completely (the next character, at most 4 bytes, would have fitted).
    /// `STRING_EXPECTED` if `value` is not a string.
    pub fn utf8_into(self, value: napi_value, buf: &mut [u8]) -> Result<usize, Status> {
        let mut copied = 0;
        // SAFETY: buf is writable for buf.len() bytes.
        ok(unsafe {
            napi_get_value_string_utf8(
                self.0,
                value,
                buf.as_mut_ptr().cast(),
                buf.len(),
                &mut copied,
            )
        })?;
        Ok(copied)
    }

    /// UTF-8 byte length of string `value`.
    pub fn utf8_len(self, value: napi_value) -> Result<usize, Status> {
        let mut len = 0;
        // SAFETY: a NULL buffer asks for the length only.
        ok(unsafe { napi_get_value_string_utf8(self.0, value, ptr::null_mut(), 0, &mut len) })?;
        Ok(len)
    }

    pub fn is_buffer(self, value: napi_value) -> Result<bool, Status> {
        let mut b = false;
        // SAFETY: out-pointer.
        ok(unsafe { napi_is_buffer(self.0, value, &mut b) })?;
        Ok(b)
    }

    /// The bytes of Buffer `value`, borrowed from JS memory.
    ///
    /// Contract (the compiler does not check it): `value` is an argument of the current call,
    /// which keeps the Buffer alive until the call returns, and the slice is used only while
    /// no JS runs (JS could change or detach the Buffer) and not after the call returns.
    pub fn buffer_bytes<'a>(self, value: napi_value) -> Result<&'a [u8], Status> {
        let (data, len) = self.buffer_info(value)?;
        Ok(if len == 0 {
            &[]
        } else {
            // SAFETY: Node reports `len` bytes at `data`, which stay valid and unchanged while
            // the slice is used (the contract above).
            unsafe { std::slice::from_raw_parts(data as *const u8, len) }
        })
    }

    /// As `buffer_bytes`, to write into: the Buffer's memory, which JS reads only after the
    /// call returns. Contract as `buffer_bytes`, and no other slice of the same Buffer is in
    /// use meanwhile.
    pub fn buffer_bytes_mut<'a>(self, value: napi_value) -> Result<&'a mut [u8], Status> {
        let (data, len) = self.buffer_info(value)?;
        Ok(if len == 0 {
            &mut []
        } else {
            // SAFETY: as in `buffer_bytes`; by the contract nothing else reads or writes these
            // bytes while the slice is used.
            unsafe { std::slice::from_raw_parts_mut(data as *mut u8, len) }
        })
    }

    /// napi_get_buffer_info: the data pointer and length of Buffer `value`.
    fn buffer_info(self, value: napi_value) -> Result<(*mut c_void, usize), Status> {
        let mut data = ptr::null_mut();
        let mut len = 0;
        // SAFETY: `value` belongs to this env; data and len are out-pointers Node fills.
        ok(unsafe { napi_get_buffer_info(self.0, value, &mut data, &mut len) })?;
        Ok((data, len))
    }

    /// Calls `func` with `this = recv`. `Err(PENDING_EXCEPTION)` if it threw.
    pub fn call(
        self,
        recv: napi_value,
        func: napi_value,
        args: &[napi_value],
    ) -> Result<napi_value, Status> {
        out!(
            self,
            napi_call_function,
            recv,
            func,
            args.len(),
            args.as_ptr()
        )
    }

    pub fn exception_pending(self) -> bool {
        let mut pending = false;
        // SAFETY: out-pointer.
        unsafe { napi_is_exception_pending(self.0, &mut pending) };
        pending
    }

    /// Discards the pending exception, if any.
    pub fn clear_exception(self) {
        let mut ignored = ptr::null_mut();
        // SAFETY: out-pointer.
        unsafe { napi_get_and_clear_last_exception(self.0, &mut ignored) };
    }

    /// Throws `new Error(message)` with `error.code = code`. Does nothing if an exception is
    /// already pending (that one propagates).
    pub fn throw_error(self, code: &str, message: &str) {
        if self.exception_pending() {
            return;
        }
        let error = (|| {
            let code = self.string(code)?;
            let message = self.string(message)?;
            let mut error = ptr::null_mut();
            // SAFETY: code and message are strings of this env.
            ok(unsafe { napi_create_error(self.0, code, message, &mut error) })?;
            Ok::<_, Status>(error)
        })();
        if let Ok(error) = error {
            // SAFETY: error is a value of this env.
            unsafe { napi_throw(self.0, error) };
        }
    }

    pub fn function(self, name: &CStr, cb: napi_callback) -> Result<napi_value, Status> {
        let bytes = name.to_bytes();
        out!(
            self,
            napi_create_function,
            bytes.as_ptr().cast(),
            bytes.len(),
            cb,
            ptr::null_mut()
        )
    }
}

/// Sets `exports[name] = function` for every entry of `table`; called from
/// `napi_register_module_v1`, once per JS context (main thread and each worker thread).
pub fn register(
    env: Env,
    exports: napi_value,
    table: &[(&CStr, napi_callback)],
) -> Result<napi_value, Status> {
    for &(name, cb) in table {
        let f = env.function(name, cb)?;
        env.set_named(exports, name, f)?;
    }
    Ok(exports)
}
