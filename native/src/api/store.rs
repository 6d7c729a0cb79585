//! Exports of the store API (DESIGN.md §1: get, ordered range scans, a synchronous write
//! transaction around a JS callback) and the module's utilities, over `crate::store`.

use super::args::{bool_arg, buffer_arg, buffer_mut_arg, bytes_arg, int_arg, number_arg, optional_bool_arg, table_arg, with_dir, with_string_bytes, KEY_STACK};
use super::{bad, Error};
use crate::check;
use crate::counterlog;
use crate::groups;
use crate::hash;
use crate::meta;
use crate::migrate;
use crate::napi::{napi_value, Env, ValueType};
use crate::reqid;
use crate::store::{self, OpenOptions, StoreError, Table};
use crate::verified;

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
    let write_map = optional_bool_arg(env, args[4], "writeMap", false)?;
    let opts = OpenOptions {
        sync_interval_ms: sync_interval_ms as u64,
        initial_map_bytes: initial_map_bytes as usize,
        write_map,
        durable_commits: durability_disk,
    };
    with_dir(env, args[0], |dir| Ok(store::open(dir, &opts)?))?;
    migrate::run()?;
    check::mark_tables()?;
    counterlog::load()?;
    Ok(env.undefined()?)
}

/// storeInUse(dir): boolean — whether another process has the store in `dir` open (a
/// server on it: restoring over it would lose what it writes next).
pub fn store_in_use(env: Env, args: &[napi_value; 1]) -> Result<napi_value, Error> {
    let in_use = with_dir(env, args[0], |dir| Ok(crate::store::open_elsewhere(dir)))?;
    Ok(env.boolean(in_use)?)
}

/// checkStore(dir: string, budgetMs: number): string — the integrity of the data file in
/// `dir`, walked without LMDB (check.rs), as JSON; budgetMs 0: no limit.
pub fn check_store(env: Env, args: &[napi_value; 2]) -> Result<napi_value, Error> {
    let budget_ms = number_arg(env, args[1], "budgetMs")?;
    let budget = (budget_ms > 0.0).then(|| std::time::Duration::from_secs_f64(budget_ms.min(1e9) / 1000.0));
    let expected: Vec<&str> = Table::ALL.iter().map(|t| t.name()).collect();
    let report = with_dir(env, args[0], |dir| Ok(check::check_dir(dir, &expected, budget)))?;
    Ok(env.string_from_utf8(&report.json())?)
}

/// backup(dir: string): number — a compacted copy of the open store into the empty directory
/// `dir` (store::backup); the last transaction id before it began.
pub fn backup(env: Env, args: &[napi_value; 1]) -> Result<napi_value, Error> {
    let txn = with_dir(env, args[0], |dir| Ok(store::backup(dir)?))?;
    Ok(env.double(txn as f64)?)
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
    let value = store::get(table, key, |v| {
        store::note_read(table, key, v);
        match v {
            Some(bytes) => env.buffer_copy(bytes),
            None => env.undefined(),
        }
    })?;
    Ok(value?)
}

/// getInto(table, key, out: Buffer): number — the value's length, -1 when absent. The value
/// is copied to the start of `out` when it fits; a longer one is not copied (the caller reads
/// it again into a larger `out`), and an empty `out` asks only whether the key is there. No Buffer is made,
/// which is most of what `get` costs (V8's backing-store allocation and its sweeping). `out`
/// must not be the Buffer `key` is passed in.
pub fn get_into(env: Env, args: &[napi_value; 3]) -> Result<napi_value, Error> {
    let table = table_arg(env, args[0])?;
    let mut stack = [0u8; KEY_STACK];
    let key = bytes_arg(env, args[1], &mut stack, "key")?;
    let out = buffer_mut_arg(env, args[2], "out")?;
    let len = store::get(table, key, |v| {
        store::note_read(table, key, v);
        match v {
            Some(bytes) => {
                if let Some(into) = out.get_mut(..bytes.len()) {
                    into.copy_from_slice(bytes);
                }
                bytes.len() as f64
            }
            None => -1.0,
        }
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

/// writeGroups(plan: Buffer): Buffer — only inside transaction(): runs a write plan
/// (groups.rs lays it out), one outcome byte per group (0 written, 1 a key that had to be
/// absent is present, 2 a key held another value).
pub fn write_groups(env: Env, args: &[napi_value; 1]) -> Result<napi_value, Error> {
    let plan = buffer_arg(env, args[0], "plan")?;
    let outcomes = groups::run(plan)?;
    Ok(env.buffer_copy(&outcomes)?)
}

/// The arguments of range / rangePacked, `(table, start, end | null, limit)`, handed to `f`.
fn with_range_args<T>(
    env: Env,
    args: &[napi_value; 4],
    f: impl FnOnce(Table, &[u8], Option<&[u8]>, usize) -> Result<T, Error>,
) -> Result<T, Error> {
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
    f(table, start, end, limit)
}

/// range(table, start, end | null, limit): Buffer[] — flat [k0, v0, k1, v1, …],
/// start <= key < end, ascending, at most `limit` entries. An empty start means "first key".
pub fn range(env: Env, args: &[napi_value; 4]) -> Result<napi_value, Error> {
    with_range_args(env, args, |table, start, end, limit| {
        let out = env.array(0)?;
        let mut index = 0u32;
        store::range(table, start, end, limit, |k, v| {
            env.set_element(out, index, env.buffer_copy(k)?)?;
            env.set_element(out, index + 1, env.buffer_copy(v)?)?;
            index += 2;
            Ok::<_, Error>(())
        })?;
        Ok(out)
    })
}

/// rangePacked(table, start, end | null, limit): Buffer — what `range` finds, in one Buffer:
/// per entry `[u32 LE key length][key][u32 LE value length][value]`, for walks over whole
/// tables (keyward check), where a Buffer per key and value costs more than the walk.
pub fn range_packed(env: Env, args: &[napi_value; 4]) -> Result<napi_value, Error> {
    with_range_args(env, args, |table, start, end, limit| {
        let mut packed = Vec::new();
        store::range(table, start, end, limit, |k, v| {
            for part in [k, v] {
                packed.extend_from_slice(&(part.len() as u32).to_le_bytes());
                packed.extend_from_slice(part);
            }
            Ok::<_, Error>(())
        })?;
        Ok(env.buffer_copy(&packed)?)
    })
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

/// dryRun(fn: () => T): [T, Buffer] — runs fn as `transaction` does (it may be re-run after
/// the map grew) but never commits: returns fn's value and what it wrote (store::dry_run:
/// record puts and deletes with each key's value before and after, and credits under
/// credits::CREDITS_WRITES; then the records it read and did not write), encoded as
/// store::encode_dry_run lays it out.
pub fn dry_run(env: Env, args: &[napi_value; 1]) -> Result<napi_value, Error> {
    let f = args[0];
    if env.type_of(f)? != ValueType::Function {
        return Err(bad("dryRun() needs a function"));
    }
    let recv = env.undefined()?;
    let (value, written, reads) = store::dry_run(|| {
        let result = env.call(recv, f, &[]);
        if store::transaction_needs_retry() {
            env.clear_exception();
        }
        result.map_err(Error::from)
    })?;
    let out = env.array(2)?;
    env.set_element(out, 0, value)?;
    env.set_element(out, 1, env.buffer_copy(&store::encode_dry_run(&written, &reads))?)?;
    Ok(out)
}

/// sync(): void — mdb_env_sync(force = 1).
pub fn sync(env: Env, _: &[napi_value; 0]) -> Result<napi_value, Error> {
    store::sync()?;
    Ok(env.undefined()?)
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

/// tables(): string[] — the names of the store's tables in id order (store::Table), for
/// src/engine/tables.ts to be compared with.
pub fn tables(env: Env, _: &[napi_value; 0]) -> Result<napi_value, Error> {
    let out = env.array(Table::COUNT)?;
    for (i, table) in Table::ALL.iter().enumerate() {
        env.set_element(out, i as u32, env.string(table.name())?)?;
    }
    Ok(out)
}

/// fillRandom(target: Uint8Array): void — fills `target` with cryptographically secure random
/// bytes (random.rs); throws STORE_IO when the kernel's source cannot be read.
pub fn fill_random(env: Env, args: &[napi_value; 1]) -> Result<napi_value, Error> {
    let target = buffer_mut_arg(env, args[0], "target")?;
    crate::random::fill(target).map_err(|e| Error::Store(StoreError::Os(format!("random bytes: {e}"))))?;
    Ok(env.undefined()?)
}

/// raiseFileLimit(): [soft, hard] — raises the process's soft limit of open descriptors to its
/// hard limit (best effort) and returns the limits in force; throws STORE_IO when they cannot
/// be read.
pub fn raise_file_limit(env: Env, _: &[napi_value; 0]) -> Result<napi_value, Error> {
    let (soft, hard) = crate::ffi::os::raise_file_limit().map_err(|e| Error::Store(StoreError::Os(format!("descriptor limit: {e}"))))?;
    let out = env.array(2)?;
    env.set_element(out, 0, env.double(soft as f64)?)?;
    env.set_element(out, 1, env.double(hard as f64)?)?;
    Ok(out)
}
