//! Exports of the hot procedures and their group commit.
//!
//! keys.verifyKey, ratelimits.limit and ratelimits.multiLimit have one entry each:
//! `(request: Uint8Array, context: Buffer) => string | undefined`. `request` is the JSON body
//! (body.rs reads it), `context` the fixed layout of context.rs (time, workspace, the root
//! key's scope, request id; the call writes its effect into it). The reply is the whole
//! success envelope. undefined: the call declined the body, having read nothing from the
//! store, changed nothing and drawn no request id; the full way validates it and calls again
//! with the validated bytes and the VALIDATED flag, which the call answers or throws
//! ENGINE_DECLINED for (the reader and the schema disagree: a bug).
//!
//! limit and multiLimit also decline a body that names a namespace the workspace does not
//! have, or one outside the scope: the full way creates it, or answers the 403.
//!
//! In cluster mode a call may also need what only the cluster can decide (context.rs
//! NEEDS_CLUSTER): it then returns the JSON of that need instead of a reply, having changed
//! nothing, and src/cluster/ settles the need and calls again (a request id it drew is
//! drawn again then).

use std::borrow::Cow;
use std::time::Instant;

use super::args::{bool_arg, buffer_arg, buffer_mut_arg, int_arg, str_arg};
use super::{bad, Error};
use crate::body;
use crate::context::{self, Context};
use crate::counterlog;
use crate::events;
use crate::hot::{self, Effect, Scratch};
use crate::limit::{self, LimitError, LimitRequest};
use crate::napi::{napi_value, Env};
use crate::decisions;
use crate::json;
use crate::reqid;
use crate::store;
use crate::verify::{self, in_scope, VerifyError};

/// The request bytes and the context of a hot call, which must not overlap (the context is
/// written while the request's strings are still borrowed).
fn hot_args<'a>(env: Env, args: &[napi_value; 2]) -> Result<(&'a [u8], &'a mut [u8]), Error> {
    let request = buffer_arg(env, args[0], "request")?;
    let context = buffer_mut_arg(env, args[1], "context")?;
    let (r, c) = (request.as_ptr_range(), context.as_ptr_range());
    if r.start < c.end && c.start < r.end {
        return Err(bad("request and context must not share memory"));
    }
    Ok((request, context))
}

fn context_of<'c>(context: &'c [u8]) -> Result<Context<'c>, Error> {
    context::read(context).map_err(|why| bad(format!("context: {why}")))
}

/// What a served call returns: its reply (or, when it needs the cluster, the JSON of what it
/// needs) and its effect.
struct Served {
    reply: napi_value,
    effect: Effect,
    needs: u32,
}

/// Runs an evaluation with this thread's scratch buffers under the request id of `ctx` (or
/// the next of this thread's ids) and returns the reply as a JS string, with the effect; or,
/// when the evaluation left a need (hot::Scratch::need), that need, having changed nothing.
fn answer(env: Env, ctx: &Context<'_>, kind: u8, body: &[u8], call: impl FnOnce(&mut Scratch) -> Result<Effect, Error>) -> Result<Served, Error> {
    hot::with_scratch(|scratch| {
        let started = (ctx.events && events::on()).then(Instant::now);
        scratch.subject.clear();
        scratch.spent = 0;
        match ctx.request_id {
            Some(id) => scratch.envelope(id),
            None => scratch.envelope(reqid::next().as_str()),
        }
        let effect = call(scratch)?;
        // Taken whatever the call did, so that it is not charged to a later one. It covers the
        // reads made for this request before the call too (its root key, by the dispatcher).
        let effect = effect.reading(store::take_uncommitted_read());
        if !scratch.sync.is_empty() {
            need_windows(scratch);
        }
        if !scratch.need.is_empty() {
            debug_assert!(matches!(effect, Effect::Read | Effect::ReadUncommitted), "a call that needs the cluster changes nothing");
            return Ok(Served { reply: env.string_from_utf8(&scratch.need)?, effect, needs: context::NEEDS_CLUSTER });
        }
        match env.string_from_utf8(scratch.reply()) {
            Ok(reply) => {
                decisions::count(kind, &scratch.out, scratch.spent);
                if let Some(started) = started {
                    let latency_us = started.elapsed().as_micros().min(u32::MAX as u128) as u32;
                    events::record(&events::Event { kind, time_ms: ctx.now_ms, latency_us, workspace_id: ctx.workspace_id.as_bytes(), request_id: &scratch.request_id, subject: &scratch.subject, body, reply: &scratch.out });
                }
                Ok(Served { reply, effect, needs: if scratch.paid_used { context::PAID_USED } else { 0 } })
            }
            Err(status) => {
                // JS learns of a batch this call opened only from its effect: without a
                // reply, the batch must not stay open.
                if effect == Effect::OpenedBatch {
                    store::batch_abort();
                }
                Err(status.into())
            }
        }
    })
}

/// The need of a call only Redis can decide, as JSON: `{"windows":[{"key": hex of the
/// counter's name, "seq", "duration", "limit", "cost", "weight"}, …]}` (src/cluster/windows.ts
/// reads it).
fn need_windows(scratch: &mut Scratch) {
    let windows = std::mem::take(&mut scratch.sync);
    scratch.need.clear();
    json::raw(&mut scratch.need, "{\"windows\":[");
    for (i, w) in windows.iter().enumerate() {
        json::raw(&mut scratch.need, if i > 0 { ",{\"key\":\"" } else { "{\"key\":\"" });
        for b in w.key {
            scratch.need.extend_from_slice(format!("{b:02x}").as_bytes());
        }
        for (name, value) in [("seq", w.seq), ("duration", w.duration_ms), ("limit", w.limit), ("cost", w.cost), ("weight", w.weight)] {
            json::raw(&mut scratch.need, if name == "seq" { "\",\"" } else { ",\"" });
            json::raw(&mut scratch.need, name);
            json::raw(&mut scratch.need, "\":");
            json::int(&mut scratch.need, value);
        }
        scratch.need.push(b'}');
    }
    json::raw(&mut scratch.need, "]}");
}

/// Runs one hot entry: `serve` reads the request bytes under the context and answers (None:
/// declined). The result is the reply, with its effect written into the context; undefined
/// for a declined body (effect 0); ENGINE_DECLINED when the body was the full way's.
fn entry(env: Env, args: &[napi_value; 2], serve: impl FnOnce(&Context<'_>, &[u8]) -> Result<Option<Served>, Error>) -> Result<napi_value, Error> {
    let (request, context) = hot_args(env, args)?;
    let (validated, served) = {
        let ctx = context_of(context)?;
        (ctx.validated, serve(&ctx, request)?)
    };
    context::set_needs(context, served.as_ref().map_or(0, |s| s.needs));
    match served {
        Some(Served { reply, effect, .. }) => {
            context::set_effect(context, effect);
            Ok(reply)
        }
        None if validated => Err(Error::Coded("ENGINE_DECLINED", "the engine declined a request the full way validated: its reader (native/src/body.rs) and the procedure's schema disagree".into())),
        None => {
            context::set_effect(context, Effect::Read);
            Ok(env.undefined()?)
        }
    }
}

/// verifyKey(request, context): string | undefined — keys.verifyKey (verify.rs). Throws
/// VERIFY_QUERY_SYNTAX (message says where), VERIFY_UNKNOWN_LIMIT (message = the limit's
/// name), STORE_*.
pub fn verify_key(env: Env, args: &[napi_value; 2]) -> Result<napi_value, Error> {
    entry(env, args, |ctx, request| {
        let Some(b) = body::verify(request) else { return Ok(None) };
        let req = verify::Request { workspace_id: ctx.workspace_id, allowed_apis: ctx.scope, key: b.key.as_bytes(), key_hash: ctx.key_hash, cost: b.cost, query: b.permissions.as_deref(), named: b.named, now_ms: ctx.now_ms, credits: ctx.credits, windows: ctx.windows };
        answer(env, ctx, events::VERIFY, request, |scratch| verify::verify(&req, scratch).map_err(verify_error)).map(Some)
    })
}

/// limit(request, context): string | undefined — ratelimits.limit (limit.rs).
pub fn limit(env: Env, args: &[napi_value; 2]) -> Result<napi_value, Error> {
    entry(env, args, |ctx, request| {
        let Some(b) = body::limit(request) else { return Ok(None) };
        let Some(id) = namespace_in_scope(ctx, &b.namespace)? else { return Ok(None) };
        let req = LimitRequest { namespace_id: Cow::Borrowed(&*id), ..b.request };
        answer(env, ctx, events::LIMIT, request, |scratch| {
            scratch.subject.extend_from_slice(id.as_bytes());
            limit::limit(std::slice::from_ref(&req), None, ctx.now_ms, ctx.windows, scratch).map_err(limit_error)
        })
        .map(Some)
    })
}

/// multiLimit(request, context): string | undefined — ratelimits.multiLimit, all or nothing
/// (limit.rs).
pub fn multi_limit(env: Env, args: &[napi_value; 2]) -> Result<napi_value, Error> {
    entry(env, args, |ctx, request| {
        let Some(items) = body::multi_limit(request) else { return Ok(None) };
        let Some(ids) = items.iter().map(|b| namespace_in_scope(ctx, &b.namespace)).collect::<Result<Option<Vec<_>>, Error>>()? else { return Ok(None) };
        let names: Vec<&str> = items.iter().map(|b| &*b.namespace).collect();
        let reqs: Vec<LimitRequest<'_>> = items.iter().zip(&ids).map(|(b, id)| LimitRequest { namespace_id: Cow::Borrowed(&**id), identifier: Cow::Borrowed(&*b.request.identifier), ..b.request }).collect();
        answer(env, ctx, events::MULTI_LIMIT, request, |scratch| {
            for (i, id) in ids.iter().enumerate() {
                if i > 0 {
                    scratch.subject.push(b'\n');
                }
                scratch.subject.extend_from_slice(id.as_bytes());
            }
            limit::limit(&reqs, Some(&names), ctx.now_ms, ctx.windows, scratch).map_err(limit_error)
        })
        .map(Some)
    })
}

/// The id of the namespace a limit body names, when the workspace has it and it is in the
/// root key's scope.
fn namespace_in_scope(ctx: &Context<'_>, name_or_id: &str) -> Result<Option<std::rc::Rc<str>>, Error> {
    Ok(limit::namespace_id(ctx.workspace_id, name_or_id).map_err(limit_error)?.filter(|id| in_scope(ctx.scope, id.as_bytes())))
}

/// hotBounds(): string — the bounds the body readers check, as JSON (body.rs BOUNDS), for
/// src/engine/bounds.ts to compare with the schemas.
pub fn hot_bounds(env: Env, _: &[napi_value; 0]) -> Result<napi_value, Error> {
    Ok(env.string_from_utf8(&body::bounds_json())?)
}

fn verify_error(e: VerifyError) -> Error {
    match e {
        VerifyError::Store(e) => Error::Store(e),
        VerifyError::Query(m) => Error::Coded("VERIFY_QUERY_SYNTAX", m),
        VerifyError::UnknownLimit(name) => Error::Coded("VERIFY_UNKNOWN_LIMIT", name),
        VerifyError::Corrupt(what) => Error::Coded("STORE_CORRUPT", format!("a stored record could not be decoded: {what}")),
    }
}

fn limit_error(e: LimitError) -> Error {
    match e {
        LimitError::Store(e) => Error::Store(e),
        LimitError::Corrupt(what) => Error::Coded("STORE_CORRUPT", format!("a stored record could not be decoded: {what}")),
    }
}

/// sweepLog(nowMs, max): [deleted: number, atEnd: boolean] — visits the next `max` records
/// of the counter log (crate::counterlog keeps the place) and deletes garbage and stale windows;
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

/// batchBegin(): boolean — opens this thread's group-commit batch (see store::batch_begin);
/// false when one is open already (a hot call opened it), which is then left as it is.
pub fn batch_begin(env: Env, _: &[napi_value; 0]) -> Result<napi_value, Error> {
    if store::in_batch() {
        return Ok(env.boolean(false)?);
    }
    store::batch_begin()?;
    Ok(env.boolean(true)?)
}

/// batchCommit(): boolean — commits the open batch; false when none was open. On failure
/// (STORE_RETRY_MAP_FULL, STORE_IO) nothing of the batch was committed.
pub fn batch_commit(env: Env, _: &[napi_value; 0]) -> Result<napi_value, Error> {
    Ok(env.boolean(store::batch_commit()?)?)
}

/// takeUncommittedRead(): boolean — whether this thread read what its open batch changed
/// since the batch began, the last take or the last hot call (see store::take_uncommitted_read); clears it.
pub fn take_uncommitted_read(env: Env, _: &[napi_value; 0]) -> Result<napi_value, Error> {
    Ok(env.boolean(store::take_uncommitted_read())?)
}

/// setGroupCommit(on: boolean): void — see hot::set_group_commit.
pub fn set_group_commit(env: Env, args: &[napi_value; 1]) -> Result<napi_value, Error> {
    hot::set_group_commit(bool_arg(env, args[0], "on")?);
    Ok(env.undefined()?)
}
