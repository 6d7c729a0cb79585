//! The JS-facing store API: argument parsing, calls into `store`, and the one boundary
//! (`boundary`) that turns errors and Rust panics into JS exceptions with a `code`.
//!
//! Keys are a string (its UTF-8 bytes) or a Buffer, at most 511 bytes, read into a stack
//! buffer or borrowed from the Buffer; values are Buffers. No JS objects are built on
//! get/range except the returned Buffers (and range's array).

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

use crate::body;
use crate::credits::{self, Credits};
use crate::hot as hot_mod;
use crate::limit::{self, LimitError, LimitRequest};
use crate::reqid;
use crate::verified;
use crate::counterlog;
use crate::verify::{self, Named, Request, VerifyError};
use crate::hash;
use crate::meta;
use crate::migrate;
use crate::napi::{self, napi_callback_info, napi_env, napi_value, Env, Status, ValueType};
use crate::store::{self, OpenOptions, StoreError, Table, MAX_KEY_BYTES};

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

/// Stack room for a key: 511 bytes + 4 (one more character) + 1 (NUL written by Node).
const KEY_STACK: usize = MAX_KEY_BYTES + 5;

/// A key or range bound: string (UTF-8) into `stack`, or a Buffer borrowed from JS.
/// Strings longer than 511 bytes are rejected here; emptiness is checked by `store`.
fn bytes_arg<'a>(
    env: Env,
    value: napi_value,
    stack: &'a mut [u8; KEY_STACK],
    what: &str,
) -> Result<&'a [u8], Error> {
    match env.utf8_into(value, stack) {
        Ok(n) if n <= MAX_KEY_BYTES => Ok(&stack[..n]),
        Ok(_) => Err(bad(format!("{what} is longer than {MAX_KEY_BYTES} bytes"))),
        Err(Status(napi::STRING_EXPECTED)) if env.is_buffer(value)? => {
            // The Buffer is an argument of this call and no JS runs while it is used.
            Ok(env.buffer_bytes(value)?)
        }
        Err(Status(napi::STRING_EXPECTED)) => {
            Err(bad(format!("{what} must be a string or Buffer")))
        }
        Err(status) => Err(status.into()),
    }
}

fn table_arg(env: Env, value: napi_value) -> Result<Table, Error> {
    let mut buf = [0u8; 32];
    let n = match env.utf8_into(value, &mut buf) {
        Ok(n) => n,
        Err(Status(napi::STRING_EXPECTED)) => return Err(bad("table name must be a string")),
        Err(status) => return Err(status.into()),
    };
    Table::from_name(&buf[..n]).ok_or_else(|| {
        StoreError::UnknownTable(String::from_utf8_lossy(&buf[..n]).into_owned()).into()
    })
}

fn buffer_arg<'a>(env: Env, value: napi_value, what: &str) -> Result<&'a [u8], Error> {
    if !env.is_buffer(value)? {
        return Err(bad(format!("{what} must be a Buffer")));
    }
    // The Buffer is an argument of this call and no JS runs while it is used.
    Ok(env.buffer_bytes(value)?)
}

fn number_arg(env: Env, value: napi_value, what: &str) -> Result<f64, Error> {
    match env.get_double(value) {
        Ok(n) if n >= 0.0 && !n.is_nan() => Ok(n),
        Ok(_) | Err(Status(napi::NUMBER_EXPECTED)) => {
            Err(bad(format!("{what} must be a non-negative number")))
        }
        Err(status) => Err(status.into()),
    }
}

fn bool_arg(env: Env, value: napi_value, what: &str) -> Result<bool, Error> {
    match env.get_bool(value) {
        Ok(b) => Ok(b),
        Err(Status(napi::BOOLEAN_EXPECTED)) => Err(bad(format!("{what} must be a boolean"))),
        Err(status) => Err(status.into()),
    }
}

/// A whole string of any length: stack buffer when it fits, heap otherwise.
fn with_string_bytes<R>(
    env: Env,
    value: napi_value,
    f: impl FnOnce(&[u8]) -> R,
) -> Result<Option<R>, Error> {
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

// ---- exports -------------------------------------------------------------------------

/// open(dir: string, durabilityDisk: boolean, syncIntervalMs: number, initialMapBytes: number,
/// writeMap = true): void — writeMap false keeps commits on pwrite (store::open_env).
pub fn open(env: Env, args: &[napi_value; 5]) -> Result<napi_value, Error> {
    // `process` commits to the page cache (MDB_NOSYNC; the background syncer fsyncs); `disk`
    // makes each commit's pages durable before its meta page (store::open), and its group
    // commit calls sync() from TypeScript before replies leave.
    let durability_disk = bool_arg(env, args[1], "durabilityDisk")?;
    let sync_interval_ms = number_arg(env, args[2], "syncIntervalMs")?;
    let initial_map_bytes = number_arg(env, args[3], "initialMapBytes")?;
    if !sync_interval_ms.is_finite() || !initial_map_bytes.is_finite() {
        return Err(bad("syncIntervalMs and initialMapBytes must be finite"));
    }
    let write_map = match env.type_of(args[4])? {
        ValueType::Undefined => false,
        _ => bool_arg(env, args[4], "writeMap")?,
    };
    let opts = OpenOptions {
        sync_interval_ms: sync_interval_ms as u64,
        initial_map_bytes: initial_map_bytes as usize,
        write_map,
        durable_commits: durability_disk,
    };
    let opened = with_string_bytes(env, args[0], |dir| match std::str::from_utf8(dir) {
        Ok(dir) if !dir.is_empty() => store::open(Path::new(dir), &opts),
        _ => Err(StoreError::BadArgument(
            "dir must be a non-empty path".into(),
        )),
    })?;
    opened.ok_or_else(|| bad("dir must be a string"))??;
    migrate::run()?;
    counterlog::load()?;
    Ok(env.undefined()?)
}

/// close(): void
pub fn close(env: Env, _: &[napi_value; 0]) -> Result<napi_value, Error> {
    store::close()?;
    Ok(env.undefined()?)
}

/// get(table, key): Buffer | undefined
pub fn get(env: Env, args: &[napi_value; 2]) -> Result<napi_value, Error> {
    let table = table_arg(env, args[0])?;
    let mut stack = [0u8; KEY_STACK];
    let key = bytes_arg(env, args[1], &mut stack, "key")?;
    let value = store::get(table, key, |v| match v {
        Some(bytes) => env.buffer_copy(bytes),
        None => env.undefined(),
    })?;
    Ok(value?)
}

/// getInto(table, key, target: Buffer): number — copies the value into `target` and returns
/// its length; −1 when there is no value; a length larger than `target` means it did not
/// fit and nothing was copied (use get). Saves allocating a Buffer per read.
pub fn get_into(env: Env, args: &[napi_value; 3]) -> Result<napi_value, Error> {
    let table = table_arg(env, args[0])?;
    let mut stack = [0u8; KEY_STACK];
    let key = bytes_arg(env, args[1], &mut stack, "key")?;
    if !env.is_buffer(args[2])? {
        return Err(bad("target must be a Buffer"));
    }
    // The Buffer is an argument of this call; no JS runs while we write into it.
    let target = env.buffer_bytes_mut(args[2])?;
    let len = store::get(table, key, |v| match v {
        Some(bytes) if bytes.len() <= target.len() => {
            target[..bytes.len()].copy_from_slice(bytes);
            bytes.len() as f64
        }
        Some(bytes) => bytes.len() as f64,
        None => -1.0,
    })?;
    Ok(env.double(len)?)
}

/// put(table, key, value: Buffer): void — only inside transaction().
pub fn put(env: Env, args: &[napi_value; 3]) -> Result<napi_value, Error> {
    let table = table_arg(env, args[0])?;
    let mut stack = [0u8; KEY_STACK];
    let key = bytes_arg(env, args[1], &mut stack, "key")?;
    let value = buffer_arg(env, args[2], "value")?;
    store::put(table, key, value)?;
    Ok(env.undefined()?)
}

/// del(table, key): boolean — true if the key existed; only inside transaction().
pub fn del(env: Env, args: &[napi_value; 2]) -> Result<napi_value, Error> {
    let table = table_arg(env, args[0])?;
    let mut stack = [0u8; KEY_STACK];
    let key = bytes_arg(env, args[1], &mut stack, "key")?;
    let existed = store::del(table, key)?;
    Ok(env.boolean(existed)?)
}

/// range(table, start, end | null, limit): Buffer[] — flat [k0, v0, k1, v1, …],
/// start <= key < end, ascending, at most `limit` entries. An empty start means "first key".
pub fn range(env: Env, args: &[napi_value; 4]) -> Result<napi_value, Error> {
    let table = table_arg(env, args[0])?;
    let mut start_stack = [0u8; KEY_STACK];
    let start = bytes_arg(env, args[1], &mut start_stack, "start")?;
    let mut end_stack = [0u8; KEY_STACK];
    let end = match env.type_of(args[2])? {
        ValueType::Null | ValueType::Undefined => None,
        _ => Some(bytes_arg(env, args[2], &mut end_stack, "end")?),
    };
    let limit = number_arg(env, args[3], "limit")?;
    let limit = if limit >= u32::MAX as f64 {
        u32::MAX as usize / 2
    } else {
        limit as usize
    };
    let out = env.array(0)?;
    let mut index = 0u32;
    store::range(table, start, end, limit, |k, v| {
        env.set_element(out, index, env.buffer_copy(k)?)?;
        env.set_element(out, index + 1, env.buffer_copy(v)?)?;
        index += 2;
        Ok::<_, Error>(())
    })?;
    Ok(out)
}

/// transaction(fn: () => T): T — see `store::transaction`: fn may be re-run after the map
/// grows, so it must have no side effects outside the store. A write that hits MAP_FULL
/// throws STORE_RETRY_MAP_FULL inside fn; whatever fn then does, the attempt is discarded.
pub fn transaction(env: Env, args: &[napi_value; 1]) -> Result<napi_value, Error> {
    let f = args[0];
    if env.type_of(f)? != ValueType::Function {
        return Err(bad("transaction() needs a function"));
    }
    let recv = env.undefined()?;
    store::transaction(|| {
        let result = env.call(recv, f, &[]);
        if store::transaction_needs_retry() {
            env.clear_exception();
        }
        result.map_err(Error::from)
    })
}

/// sync(): void — mdb_env_sync(force = 1).
pub fn sync(env: Env, _: &[napi_value; 0]) -> Result<napi_value, Error> {
    store::sync()?;
    Ok(env.undefined()?)
}

/// warm(budgetMs): { usedBytes, readBytes } — store::warm.
pub fn warm(env: Env, args: &[napi_value; 1]) -> Result<napi_value, Error> {
    let budget_ms = number_arg(env, args[0], "budgetMs")?;
    let w = store::warm(std::time::Duration::from_secs_f64(budget_ms.min(1e9) / 1000.0))?;
    let out = env.object()?;
    env.set_named(out, c"usedBytes", env.double(w.used_bytes as f64)?)?;
    env.set_named(out, c"readBytes", env.double(w.read_bytes as f64)?)?;
    Ok(out)
}

/// requestId(): string — the next id of this thread's request ids (reqid.rs).
pub fn request_id(env: Env, _: &[napi_value; 0]) -> Result<napi_value, Error> {
    Ok(env.string_from_utf8(reqid::next().as_str().as_bytes())?)
}

/// rootKeysVersion(): number — see meta::root_keys_version.
pub fn root_keys_version(env: Env, _: &[napi_value; 0]) -> Result<napi_value, Error> {
    Ok(env.double(meta::root_keys_version()?)?)
}

/// stats(): { usedBytes, mapBytes, pageSize, lastTxnId, entries, writeMap, verifyCacheHits,
/// verifyCacheMisses }.
pub fn stats(env: Env, _: &[napi_value; 0]) -> Result<napi_value, Error> {
    let s = store::stats()?;
    let out = env.object()?;
    env.set_named(out, c"usedBytes", env.double(s.used_bytes as f64)?)?;
    env.set_named(out, c"mapBytes", env.double(s.map_bytes as f64)?)?;
    env.set_named(out, c"pageSize", env.double(s.page_size as f64)?)?;
    env.set_named(out, c"lastTxnId", env.double(s.last_txn_id as f64)?)?;
    env.set_named(out, c"entries", env.double(s.entries as f64)?)?;
    env.set_named(out, c"writeMap", env.boolean(s.write_map)?)?;
    let c = verified::counts();
    env.set_named(out, c"verifyCacheHits", env.double(c.answer_hits as f64)?)?;
    env.set_named(out, c"verifyCacheMisses", env.double(c.answer_misses as f64)?)?;
    env.set_named(out, c"verifyCacheRecordHits", env.double(c.record_hits as f64)?)?;
    env.set_named(out, c"verifyCacheRecordMisses", env.double(c.record_misses as f64)?)?;
    Ok(out)
}

/// sha256Base64(input: string | Buffer): string — standard padded base64 of SHA-256.
pub fn sha256_base64(env: Env, args: &[napi_value; 1]) -> Result<napi_value, Error> {
    let digest = match with_string_bytes(env, args[0], hash::sha256_base64)? {
        Some(digest) => digest,
        None => hash::sha256_base64(buffer_arg(env, args[0], "input (string or Buffer)")?),
    };
    // The digest is ASCII base64.
    Ok(env.string(std::str::from_utf8(&digest).expect("base64 is ASCII"))?)
}

/// exitProcess(code): never returns — ends the process at once with `code` (`_exit`),
/// skipping Node's teardown. The server uses it to stop with several serving threads: Node
/// aborts the process (an assertion) when it tears down a worker whose uWS connections are
/// still open, and uWS.js has no call that closes idle keep-alive connections. The caller
/// has committed, synced and closed the store before.
pub fn exit_process(env: Env, args: &[napi_value; 1]) -> Result<napi_value, Error> {
    let code = int_arg(env, args[0], "code")?;
    crate::ffi::os::exit_now(code.clamp(0, 255) as i32)
}

/// _panicForTest(): never — proves panics become NATIVE_PANIC exceptions.
pub fn panic_for_test(_: Env, _: &[napi_value; 0]) -> Result<napi_value, Error> {
    panic!("_panicForTest called");
}

fn key_id_arg<'a>(env: Env, value: napi_value, stack: &'a mut [u8; KEY_STACK]) -> Result<&'a [u8], Error> {
    bytes_arg(env, value, stack, "keyId")
}

fn int_arg(env: Env, value: napi_value, what: &str) -> Result<i64, Error> {
    match env.get_double(value) {
        Ok(n) if n.is_finite() && n.fract() == 0.0 && n.abs() <= 9_007_199_254_740_991.0 => Ok(n as i64),
        Ok(_) | Err(Status(napi::NUMBER_EXPECTED)) => Err(bad(format!("{what} must be a safe integer"))),
        Err(status) => Err(status.into()),
    }
}

/// creditsGet(keyId, nowMs): [remaining, refillAmount, refillDay, lastRefillAtMs] | undefined
/// — the balance as of nowMs with a due refill applied to the view (nothing is written).
pub fn credits_get(env: Env, args: &[napi_value; 2]) -> Result<napi_value, Error> {
    let mut stack = [0u8; KEY_STACK];
    let key = key_id_arg(env, args[0], &mut stack)?;
    let now_ms = int_arg(env, args[1], "nowMs")?;
    let found = store::view(|v| counterlog::get(v, &credits::record_key(key)))?.and_then(|c| Credits::decode(&c));
    let Some(c) = found else { return Ok(env.undefined()?) };
    let (c, _) = c.refilled(now_ms);
    let out = env.array(4)?;
    for (i, v) in [c.remaining, c.refill_amount, c.refill_day, c.last_refill_at_ms].iter().enumerate() {
        env.set_element(out, i as u32, env.double(*v as f64)?)?;
    }
    Ok(out)
}

/// creditsSet(keyId, remaining, refillAmount, refillDay, lastRefillAtMs): void — inside a
/// transaction. remaining ≥ 0; refillAmount −1 (none) or ≥ 1; refillDay 0 or 1–31.
pub fn credits_set(env: Env, args: &[napi_value; 5]) -> Result<napi_value, Error> {
    let mut stack = [0u8; KEY_STACK];
    let key = key_id_arg(env, args[0], &mut stack)?;
    let c = Credits {
        remaining: int_arg(env, args[1], "remaining")?,
        refill_amount: int_arg(env, args[2], "refillAmount")?,
        refill_day: int_arg(env, args[3], "refillDay")?,
        last_refill_at_ms: int_arg(env, args[4], "lastRefillAtMs")?,
    };
    if c.remaining < 0 || c.refill_amount < -1 || c.refill_amount == 0 || !(0..=31).contains(&c.refill_day) {
        return Err(bad("credits out of range"));
    }
    store::note_records_change()?;
    counterlog::put(&credits::record_key(credits_key_id(key)?), &c.encode())?;
    Ok(env.undefined()?)
}

/// creditsDelete(keyId): boolean — inside a transaction: the key becomes unlimited (true if
/// it had a credits record).
pub fn credits_delete(env: Env, args: &[napi_value; 1]) -> Result<napi_value, Error> {
    let mut stack = [0u8; KEY_STACK];
    let key = key_id_arg(env, args[0], &mut stack)?;
    store::note_records_change()?;
    Ok(env.boolean(counterlog::remove(&credits::record_key(credits_key_id(key)?))?)?)
}

/// A key id as keyward makes them (no '/'); anything else is a caller's mistake.
fn credits_key_id(key: &[u8]) -> Result<&[u8], Error> {
    if key.contains(&b'/') {
        return Err(bad("keyId must not contain '/'"));
    }
    Ok(key)
}

/// A string argument: into `stack` when it fits, else onto the heap.
fn str_arg<'s>(env: Env, value: napi_value, stack: &'s mut [u8], what: &str) -> Result<std::borrow::Cow<'s, str>, Error> {
    let n = match env.utf8_into(value, stack) {
        Ok(n) => n,
        Err(Status(napi::STRING_EXPECTED)) => return Err(bad(format!("{what} must be a string"))),
        Err(status) => return Err(status.into()),
    };
    if n + 5 <= stack.len() {
        let s = std::str::from_utf8(&stack[..n]).map_err(|_| bad(format!("{what} is not UTF-8")))?;
        return Ok(std::borrow::Cow::Borrowed(s));
    }
    let mut heap = vec![0u8; env.utf8_len(value)? + 1];
    let n = env.utf8_into(value, &mut heap)?;
    heap.truncate(n);
    String::from_utf8(heap).map(std::borrow::Cow::Owned).map_err(|_| bad(format!("{what} is not UTF-8")))
}

fn verify_error(e: VerifyError) -> Error {
    match e {
        VerifyError::Store(e) => Error::Store(e),
        VerifyError::Query(m) => Error::Coded("VERIFY_QUERY_SYNTAX", m),
        VerifyError::UnknownLimit(name) => Error::Coded("VERIFY_UNKNOWN_LIMIT", name),
        VerifyError::Corrupt(what) => Error::Coded("STORE_CORRUPT", format!("a stored record could not be decoded: {what}")),
    }
}

/// verifyKey(workspaceId, allowedApis, key, cost, query, named, nowMs): string
///  - allowedApis: "*" or API ids joined by "\n" (the root key's verify_key grants);
///  - cost: credits.cost, or −1 for the default (1);
///  - query: the permission query or null;
///  - named: the request's limits as "name\u001fcost" or, for an ad-hoc limit,
///    "name\u001fcost\u001flimit\u001fdurationMs", joined by "\u001e" ("" for none);
///  - requestId (optional): answer with the whole success envelope for this request id
///    (hot::Scratch::envelope) instead of the bare `data` JSON;
///  - returns "0", "1" or "2" (see hot::Effect) followed by the `data` JSON (or envelope).
///
/// Errors: VERIFY_QUERY_SYNTAX (400), VERIFY_UNKNOWN_LIMIT (412, message = the name),
/// STORE_CORRUPT, STORE_IO, STORE_CLOSED.
pub fn verify_key(env: Env, args: &[napi_value; 8]) -> Result<napi_value, Error> {
    let (mut ws_buf, mut apis_buf, mut key_buf, mut q_buf, mut named_buf) = ([0u8; 64], [0u8; 128], [0u8; 600], [0u8; 256], [0u8; 256]);
    let workspace_id = str_arg(env, args[0], &mut ws_buf, "workspaceId")?;
    let allowed_apis = str_arg(env, args[1], &mut apis_buf, "allowedApis")?;
    let key = str_arg(env, args[2], &mut key_buf, "key")?;
    let cost = env.get_double(args[3]).map_err(|_| bad("cost must be a number"))?;
    let query = match env.type_of(args[4])? {
        ValueType::Null | ValueType::Undefined => None,
        _ => Some(str_arg(env, args[4], &mut q_buf, "query")?),
    };
    let named_text = str_arg(env, args[5], &mut named_buf, "named")?;
    let now_ms = int_arg(env, args[6], "nowMs")?;
    let mut named = Vec::new();
    let int = |s: &str| s.parse::<i64>().map_err(|_| bad("named limits: cost, limit and duration must be integers"));
    for item in named_text.split('\u{1e}').filter(|s| !s.is_empty()) {
        let mut parts = item.split('\u{1f}');
        let (Some(name), Some(cost)) = (parts.next(), parts.next()) else { return Err(bad("named limits are malformed")) };
        let ad_hoc = match (parts.next(), parts.next(), parts.next()) {
            (None, _, _) => None,
            (Some(limit), Some(duration), None) => Some((int(limit)?, int(duration)?)),
            _ => return Err(bad("named limits are malformed")),
        };
        named.push(Named { name, cost: int(cost)?, ad_hoc });
    }
    let request = Request {
        workspace_id: &workspace_id,
        allowed_apis: &allowed_apis,
        key: key.as_bytes(),
        cost: if cost < 0.0 { None } else { Some(cost as i64) },
        query: query.as_deref(),
        named,
        now_ms,
    };
    let mut id_buf = [0u8; 128];
    let request_id = optional_str_arg(env, args[7], &mut id_buf, "requestId")?;
    verify_reply(env, request_id.as_deref(), &request)
}

/// verifyKeyBody(workspaceId, allowedApis, body: Uint8Array, nowMs): string | undefined —
/// verifyKey read straight from the request body's bytes when the body is in its plain form
/// (body.rs), answered with the whole success envelope under the next id of this thread's
/// request ids (reqid.rs); undefined, having read nothing from the store and drawn no id,
/// when it is not. Errors as verifyKey.
pub fn verify_key_body(env: Env, args: &[napi_value; 4]) -> Result<napi_value, Error> {
    let body = buffer_arg(env, args[2], "body")?;
    let Some(b) = body::verify(body) else { return Ok(env.undefined()?) };
    let (mut ws_buf, mut apis_buf) = ([0u8; 64], [0u8; 128]);
    let request = Request {
        workspace_id: &str_arg(env, args[0], &mut ws_buf, "workspaceId")?,
        allowed_apis: &str_arg(env, args[1], &mut apis_buf, "allowedApis")?,
        key: b.key.as_bytes(),
        cost: b.cost,
        query: b.permissions,
        named: b.named,
        now_ms: int_arg(env, args[3], "nowMs")?,
    };
    verify_reply(env, Some(reqid::next().as_str()), &request)
}

/// verifyKey's answer to `request` (both ways in: arguments or body bytes).
fn verify_reply(env: Env, request_id: Option<&str>, request: &Request<'_>) -> Result<napi_value, Error> {
    hot_reply(env, request_id, |scratch| verify::verify(request, scratch).map_err(verify_error))
}

/// limit's answer to `request` (both ways in: arguments or body bytes).
fn limit_reply(env: Env, request_id: Option<&str>, request: &LimitRequest<'_>, now_ms: i64) -> Result<napi_value, Error> {
    hot_reply(env, request_id, |scratch| limit::limit(std::slice::from_ref(request), now_ms, false, scratch).map_err(limit_error))
}

/// Runs a hot call with this thread's scratch buffers and returns what it left there as a JS
/// string: the effect flag, then the answer (or the whole success envelope for `request_id`).
fn hot_reply(env: Env, request_id: Option<&str>, call: impl FnOnce(&mut hot_mod::Scratch) -> Result<hot_mod::Effect, Error>) -> Result<napi_value, Error> {
    hot_mod::with_scratch(|scratch| {
        scratch.envelope(request_id);
        let effect = call(scratch)?;
        env.string_from_utf8(scratch.reply(effect)).map_err(|status| {
            // JS learns of a batch this call opened only from its answer: without one, the
            // batch must not stay open.
            if effect == hot_mod::Effect::OpenedBatch {
                store::batch_abort();
            }
            status.into()
        })
    })
}

/// A string argument, or None when it is undefined or null.
fn optional_str_arg<'s>(env: Env, value: napi_value, stack: &'s mut [u8], what: &str) -> Result<Option<std::borrow::Cow<'s, str>>, Error> {
    match env.type_of(value)? {
        ValueType::Undefined | ValueType::Null => Ok(None),
        _ => str_arg(env, value, stack, what).map(Some),
    }
}

fn limit_error(e: LimitError) -> Error {
    match e {
        LimitError::Store(e) => Error::Store(e),
        LimitError::Corrupt(what) => Error::Coded("STORE_CORRUPT", format!("a stored record could not be decoded: {what}")),
    }
}

/// limit(namespaceId, identifier, limit, durationMs, cost, nowMs, requestId?): string — the
/// effect flag (hot::Effect) + `{success, limit, remaining, reset, overrideId?}`, or the whole
/// success envelope when requestId is given.
pub fn limit(env: Env, args: &[napi_value; 7]) -> Result<napi_value, Error> {
    let (mut ns_buf, mut id_buf) = ([0u8; 64], [0u8; 600]);
    let namespace_id = str_arg(env, args[0], &mut ns_buf, "namespaceId")?;
    let identifier = str_arg(env, args[1], &mut id_buf, "identifier")?;
    let request = LimitRequest {
        namespace_id: &namespace_id,
        identifier: &identifier,
        limit: int_arg(env, args[2], "limit")?,
        duration_ms: int_arg(env, args[3], "durationMs")?,
        cost: int_arg(env, args[4], "cost")?,
    };
    let now_ms = int_arg(env, args[5], "nowMs")?;
    let mut id_buf = [0u8; 128];
    let request_id = optional_str_arg(env, args[6], &mut id_buf, "requestId")?;
    limit_reply(env, request_id.as_deref(), &request, now_ms)
}

/// limitBody(workspaceId, allowedNamespaces, body: Uint8Array, nowMs): string | undefined —
/// limit read straight from the request body's bytes when the body is in its plain form
/// (body.rs) and names, by its name, a namespace of the workspace in the root key's scope
/// ("*" or namespace ids joined by "\n", verify::in_scope), answered with the whole success
/// envelope under the next id of this thread's request ids (reqid.rs); undefined otherwise,
/// having changed nothing and drawn no id.
pub fn limit_body(env: Env, args: &[napi_value; 4]) -> Result<napi_value, Error> {
    let body = buffer_arg(env, args[2], "body")?;
    let Some((namespace, request)) = body::limit(body) else { return Ok(env.undefined()?) };
    let (mut ws_buf, mut scope_buf) = ([0u8; 64], [0u8; 128]);
    let workspace_id = str_arg(env, args[0], &mut ws_buf, "workspaceId")?;
    let scope = str_arg(env, args[1], &mut scope_buf, "allowedNamespaces")?;
    let now_ms = int_arg(env, args[3], "nowMs")?;
    limit::with_namespace_id(&workspace_id, namespace, |namespace_id| {
        let Some(namespace_id) = namespace_id.filter(|id| crate::verify::in_scope(&scope, id.as_bytes())) else { return Ok(env.undefined()?) };
        let request = LimitRequest { namespace_id, ..request };
        limit_reply(env, Some(reqid::next().as_str()), &request, now_ms)
    })
    .map_err(limit_error)?
}

/// limitMany(requests: Buffer, nowMs): string — "1"/"0" + a JSON array of outcomes in
/// request order. Each request in the Buffer: u16 LE length + namespaceId bytes, u16 LE
/// length + identifier bytes, then limit, durationMs, cost as f64 LE.
pub fn limit_many(env: Env, args: &[napi_value; 2]) -> Result<napi_value, Error> {
    let bytes = buffer_arg(env, args[0], "requests")?;
    let now_ms = int_arg(env, args[1], "nowMs")?;
    let requests = limit::decode_requests(bytes).map_err(|what| bad(format!("requests buffer: {what}")))?;
    hot_reply(env, None, |scratch| limit::limit(&requests, now_ms, true, scratch).map_err(limit_error))
}

/// sweepLog(nowMs, max): [deleted: number, atEnd: boolean] — visits the next `max` records
/// of the counter log (counterlog.rs keeps the place) and deletes garbage and stale windows;
/// `atEnd` when the visit reached the end of the log (the next one starts over).
pub fn sweep_log(env: Env, args: &[napi_value; 2]) -> Result<napi_value, Error> {
    let now_ms = int_arg(env, args[0], "nowMs")?;
    let max = int_arg(env, args[1], "max")?.max(1) as usize;
    let (deleted, at_end) = counterlog::sweep(now_ms, max)?;
    let out = env.array(2)?;
    env.set_element(out, 0, env.double(deleted as f64)?)?;
    env.set_element(out, 1, env.boolean(at_end)?)?;
    Ok(out)
}

/// findOverride(namespaceId, identifier): string | undefined — the override that applies
/// (exact identifier, else the longest matching pattern) as JSON
/// `{overrideId, identifier, limit, duration}`.
pub fn find_override(env: Env, args: &[napi_value; 2]) -> Result<napi_value, Error> {
    let (mut ns_buf, mut id_buf) = ([0u8; 64], [0u8; 600]);
    let namespace_id = str_arg(env, args[0], &mut ns_buf, "namespaceId")?;
    let identifier = str_arg(env, args[1], &mut id_buf, "identifier")?;
    let found = store::view(|v| {
        Ok::<_, LimitError>(limit::find_override(v, &namespace_id, &identifier)?.map(|o| {
            let mut out = Vec::new();
            crate::json::raw(&mut out, "{\"overrideId\":");
            crate::json::string(&mut out, o.id);
            crate::json::raw(&mut out, ",\"identifier\":");
            crate::json::string(&mut out, o.identifier);
            crate::json::raw(&mut out, ",\"limit\":");
            crate::json::int(&mut out, o.limit);
            crate::json::raw(&mut out, ",\"duration\":");
            crate::json::int(&mut out, o.duration_ms);
            out.push(b'}');
            out
        }))
    })
    .map_err(limit_error)?;
    match found {
        Some(json) => Ok(env.string_from_utf8(&json)?),
        None => Ok(env.undefined()?),
    }
}

/// batchBegin(): void — opens this thread's group-commit batch (see store::batch_begin).
pub fn batch_begin(env: Env, _: &[napi_value; 0]) -> Result<napi_value, Error> {
    store::batch_begin()?;
    Ok(env.undefined()?)
}

/// batchCommit(): boolean — commits the open batch; false when none was open. On failure
/// (STORE_RETRY_MAP_FULL, STORE_IO) nothing of the batch was committed.
pub fn batch_commit(env: Env, _: &[napi_value; 0]) -> Result<napi_value, Error> {
    Ok(env.boolean(store::batch_commit()?)?)
}

/// setVerifyCache(slots: number): void — slots of each serving thread's verification cache
/// (see verified.rs; 0 turns it off).
pub fn set_verify_cache(env: Env, args: &[napi_value; 1]) -> Result<napi_value, Error> {
    let slots = number_arg(env, args[0], "slots")?;
    if !(0.0..=16_777_216.0).contains(&slots) || slots.fract() != 0.0 {
        return Err(bad("slots must be an integer from 0 to 16777216"));
    }
    verified::set_slots(slots as usize);
    Ok(env.undefined()?)
}

/// setGroupCommit(on: boolean): void — see hot::set_group_commit.
pub fn set_group_commit(env: Env, args: &[napi_value; 1]) -> Result<napi_value, Error> {
    hot_mod::set_group_commit(bool_arg(env, args[0], "on")?);
    Ok(env.undefined()?)
}
