//! ratelimits.limit and ratelimits.multiLimit: one call, one transaction, all or nothing.
//! For each request: the override (exact identifier first, then the longest matching `*`
//! pattern) replaces limit and duration; the sliding-window decision is window.rs's. Only
//! when every request is admitted are the windows written; otherwise nothing is consumed
//! and admitted items report the capacity they still have.
//!
//! Windows: a counter of crate::counterlog named (`window_key`) by the tag LIMITER_WINDOW and
//! the first 15 bytes of SHA-256(namespaceId ‖ 0 ‖ durationMs in decimal ‖ 0 ‖ sid). One
//! counter per duration, so limits of different windows on one identifier do not reset each
//! other; the record is window.rs's 32 bytes. Stores written before kept windows at
//! `n/<namespaceId>/<durationMs>/<sid>` in ratelimit_windows (migrate.rs moves them, which
//! is why the digest is over `sid`, not the identifier). Overrides are in records.rs.
//! `sid` = the identifier, or `#` + base64(SHA-256(identifier)) when it is longer than 440
//! bytes (LMDB keys are at most 511 bytes) or starts with `#`: a stored `#…` is always a
//! digest, so no identifier can take the place of another's digest (before, the literal
//! identifier `#<digest of a long one>` shared that one's window and override). Namespace
//! names are stored the same way. src/store/ratelimits.ts derives it the same way; stores
//! written before are re-keyed at open (migrate.rs).

use std::borrow::Cow;
use std::cell::{Cell, RefCell};
use std::rc::Rc;

use crate::hash;
use crate::json;
use crate::memo::{self, Memo};
use crate::msgpack::DecodeError;
use crate::records::{self, OverrideRecord};
use crate::hot::{self, Effect, KeyBuf, Scratch};
use crate::store::{self, StoreError, Table, View};
use crate::shared::{self, Admission, Admitted, SyncWindow, Windows};
use crate::window::{self, Window};
use crate::counterlog;

pub const MAX_PLAIN_ID_BYTES: usize = 440;

#[derive(Debug, PartialEq)]
pub struct LimitRequest<'a> {
    pub namespace_id: Cow<'a, str>,
    pub identifier: Cow<'a, str>,
    pub limit: i64,
    pub duration_ms: i64,
    pub cost: i64,
}

#[derive(Debug)]
pub enum LimitError {
    Store(StoreError),
    Corrupt(&'static str),
}

impl From<StoreError> for LimitError {
    fn from(e: StoreError) -> Self {
        LimitError::Store(e)
    }
}

impl From<DecodeError> for LimitError {
    fn from(e: DecodeError) -> Self {
        LimitError::Corrupt(e.0)
    }
}

/// The name of the window of (`namespace_id`, `duration_ms`, `sid`); see the module.
pub fn window_key(namespace_id: &[u8], duration_ms: &[u8], sid: &[u8]) -> counterlog::Key {
    counterlog::named(counterlog::LIMITER_WINDOW, &[namespace_id, &[0], duration_ms, &[0], sid])
}

/// The `sid` of an identifier or namespace name (see the module).
pub fn storage_id(identifier: &str) -> Cow<'_, str> {
    if identifier.len() <= MAX_PLAIN_ID_BYTES && !identifier.starts_with('#') {
        return Cow::Borrowed(identifier);
    }
    let b64 = hash::sha256_base64(identifier.as_bytes());
    Cow::Owned(format!("#{}", String::from_utf8_lossy(&b64)))
}

/// `*` matches any run of characters (also none); everything else is literal; the whole
/// identifier must match.
pub fn glob_match(pattern: &[u8], text: &[u8]) -> bool {
    let (p, t) = (pattern, text);
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && p[pi] == b'*' {
            star = Some((pi, ti));
            pi += 1;
        } else if pi < p.len() && p[pi] == t[ti] {
            pi += 1;
            ti += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == b'*')
}

thread_local! {
    /// Namespace ids this thread has read, by store key (`<workspaceId>/<sid of the name>`),
    /// with the store generation they were read under. Namespaces are never deleted or
    /// renamed, so an id once committed stays right for as long as that store is open.
    static NAMESPACE_IDS: RefCell<Memo<u64, Rc<str>>> = RefCell::new(Memo::new(MAX_NAMESPACE_IDS));
}

/// Ids remembered per thread before the memo starts over.
const MAX_NAMESPACE_IDS: usize = 10_000;

/// The id of the namespace `name_or_id` names in the workspace: by its name, else (an
/// `rlns_` id) by its id, as src/store/ratelimits.ts findNamespace resolves it; None when
/// the workspace has no such namespace.
pub fn namespace_id(workspace_id: &str, name_or_id: &str) -> Result<Option<Rc<str>>, LimitError> {
    let mut key = KeyBuf::new();
    let key = key.of(&[workspace_id.as_bytes(), b"/", storage_id(name_or_id).as_bytes()]);
    let generation = store::last_generation();
    let known = NAMESPACE_IDS.with(|m| m.borrow().get(&generation, key).cloned());
    if known.is_some() {
        return Ok(known);
    }
    let found = store::view(|v| match v.get(Table::RATELIMIT_NAMESPACES, key)? {
        Some(bytes) => Ok::<_, LimitError>(Some(Rc::<str>::from(String::from_utf8_lossy(records::namespace_id(bytes)?)))),
        None => Ok(None),
    })?;
    // An id read inside a transaction that created records may not be committed yet.
    if let Some(id) = found.as_ref().filter(|_| !store::uncommitted_record_change()) {
        NAMESPACE_IDS.with(|m| m.borrow_mut().keep(generation, key, id.clone()));
    }
    if found.is_some() || !name_or_id.starts_with("rlns_") {
        return Ok(found);
    }
    // By id: the index `ns_id/<id>` holds the namespace's table key, `<workspaceId>/<sid>`.
    let mut index = KeyBuf::new();
    let index = index.of(&[b"ns_id/", name_or_id.as_bytes()]);
    let owned = store::view(|v| Ok::<_, LimitError>(v.get(Table::INDEXES, index)?.is_some_and(|k| k.strip_prefix(workspace_id.as_bytes()).is_some_and(|rest| rest.first() == Some(&b'/')))))?;
    Ok(owned.then(|| Rc::from(name_or_id)))
}

thread_local! {
    /// Whether a namespace has any override, by namespace id, per records epoch: overrides
    /// are records, so setting or deleting one starts a new epoch.
    static HAS_OVERRIDES: RefCell<Memo<(u64, u64), bool>> = RefCell::new(Memo::new(MAX_NAMESPACE_IDS));
}

/// Whether the namespace has any override (most have none).
fn has_overrides(v: &View<'_>, namespace_id: &str) -> Result<bool, LimitError> {
    memo::under_epoch(&HAS_OVERRIDES, store::records_epoch(v)?, namespace_id.as_bytes(), || {
        // Every override key of the namespace starts with "<namespaceId>/": one positioning
        // tells whether it has any.
        let mut key = KeyBuf::new();
        let any = key.of(&[namespace_id.as_bytes(), b"/"]);
        Ok(v.first_key_from(Table::RATELIMIT_OVERRIDES, any)?.is_some_and(|k| k.starts_with(any)))
    })
}

/// The override that applies to `identifier` in a namespace, if any.
pub fn find_override<'t>(v: &View<'t>, namespace_id: &str, identifier: &str) -> Result<Option<OverrideRecord<'t>>, LimitError> {
    if !has_overrides(v, namespace_id)? {
        return Ok(None);
    }
    let mut key = KeyBuf::new();
    let sid = storage_id(identifier);
    for kind in [b"/e/", b"/w/"] {
        if let Some(bytes) = v.get(Table::RATELIMIT_OVERRIDES, key.of(&[namespace_id.as_bytes(), kind, sid.as_bytes()]))? {
            return Ok(Some(records::override_record(bytes)?));
        }
    }
    let mut best: Option<OverrideRecord<'t>> = None;
    v.range_prefix(Table::RATELIMIT_OVERRIDES, key.of(&[namespace_id.as_bytes(), b"/w/"]), usize::MAX, |_, value| {
        let o = records::override_record(value)?;
        if glob_match(o.identifier, identifier.as_bytes()) && best.as_ref().is_none_or(|b| o.identifier.len() > b.identifier.len()) {
            best = Some(o);
        }
        Ok::<_, LimitError>(())
    })?;
    Ok(best)
}

struct Outcome<'t> {
    /// The window the request counts in (namespace, identifier, duration).
    key: counterlog::Key,
    duration_ms: i64,
    cost: i64,
    success: bool,
    limit: i64,
    remaining: i64,
    reset_ms: i64,
    override_id: Option<&'t [u8]>,
}

/// Decides every request and writes the outcomes into `scratch.out` (a JSON array when
/// `many`, else the one outcome); the windows are put only when every request is admitted.
///
/// Several requests of one call may name the same window. As in Unkey (reference §4.2: all
/// increments applied, every limit evaluated on the post-increment values), each of them is
/// decided on that window with the costs of all of them added, so two requests of cost 1
/// against a limit of 1 are both refused, and the window is put once.
fn evaluate(v: &View<'_>, reqs: &[LimitRequest<'_>], many: Option<&[&str]>, now_ms: i64, windows: Windows, scratch: &mut Scratch) -> Result<(), LimitError> {
    let mut outcomes = Vec::with_capacity(reqs.len());
    let mut sync = Vec::new();
    for r in reqs {
        let o = find_override(v, &r.namespace_id, &r.identifier)?;
        let (limit, duration_ms) = o.as_ref().map_or((r.limit, r.duration_ms), |o| (o.limit, o.duration_ms));
        let key = window_key(r.namespace_id.as_bytes(), json::Int::new(duration_ms).text(), storage_id(&r.identifier).as_bytes());
        outcomes.push(Outcome { key, duration_ms, cost: r.cost, success: false, limit, remaining: 0, reset_ms: 0, override_id: o.map(|o| o.id) });
    }
    for i in 0..outcomes.len() {
        let key = outcomes[i].key;
        let first = outcomes.iter().position(|o| o.key == key) == Some(i);
        let cost = if outcomes.len() == 1 {
            outcomes[i].cost
        } else {
            outcomes.iter().filter(|o| o.key == key).fold(0i64, |sum, o| sum.saturating_add(o.cost))
        };
        let stored = counterlog::get(v, &key)?.and_then(|w| Window::decode(&w));
        let o = &mut outcomes[i];
        let s = shared::decide(windows, &key, stored, now_ms, o.duration_ms, o.limit, cost);
        let d = s.decision;
        (o.success, o.remaining, o.reset_ms) = (d.success, d.remaining, d.reset_ms);
        if d.success && cost > 0 && first {
            scratch.puts.push(&key, d.next.encode());
            match s.admission {
                Admission::Sync => sync.push(SyncWindow { key, seq: d.next.seq, duration_ms: d.next.duration_ms, limit: o.limit, cost, weight: window::weight(&d.next, now_ms) }),
                Admission::Pending | Admission::Token => scratch.admitted.push(Admitted { key, seq: d.next.seq, duration_ms: d.next.duration_ms, limit: o.limit, cost, admission: s.admission }),
                Admission::None => {}
            }
        }
    }
    let all_admitted = outcomes.iter().all(|o| o.success);
    if all_admitted && !sync.is_empty() {
        scratch.need_sync(sync);
        return Ok(());
    }
    if !all_admitted {
        scratch.puts.clear();
        scratch.admitted.clear();
        // Nothing is consumed: an admitted item reports the capacity it still has.
        for o in outcomes.iter_mut().filter(|o| o.success) {
            o.remaining = (o.remaining + o.cost).min(o.limit);
        }
    }
    match many {
        Some(namespaces) => multi_json(&mut scratch.out, &outcomes, reqs, namespaces),
        None => outcome_json(&mut scratch.out, &outcomes[0]),
    }
    Ok(())
}

thread_local! {
    /// Whether this thread's last limit call changed state. Admitted calls write, so a
    /// thread usually sees runs of them: while they last, a call outside an open batch goes
    /// straight to the write transaction instead of first evaluating over a read-only view
    /// (which every admitted call then evaluated twice); a refusal turns that off until the
    /// next admitted call. Only a hint: either way the answer is the write path's.
    static LAST_WROTE: Cell<bool> = const { Cell::new(true) };
}

/// Decides every request (all or nothing) and leaves the answer in `scratch.out`:
/// ratelimits.limit's outcome object, or with `many` (the namespaces as the requests named
/// them) ratelimits.multiLimit's `{passed, limits}`; `windows`: how windows are counted in a
/// cluster (shared.rs; a call only Redis can decide leaves a sync need instead). Returns what
/// the call did to the store.
pub fn limit(reqs: &[LimitRequest<'_>], many: Option<&[&str]>, now_ms: i64, windows: Windows, scratch: &mut Scratch) -> Result<Effect, LimitError> {
    let effect = hot::run(LAST_WROTE.get(), now_ms, scratch, |v, s| evaluate(v, reqs, many, now_ms, windows, s))?;
    LAST_WROTE.set(effect != Effect::Read);
    Ok(effect)
}

/// ratelimits.limit's answer: `{success, limit, remaining, reset, overrideId?}`.
fn outcome_json(out: &mut Vec<u8>, o: &Outcome<'_>) {
    json::raw(out, "{\"success\":");
    json::bool(out, o.success);
    counts_json(out, o);
    override_json(out, o);
    out.push(b'}');
}

/// `,"limit":…,"remaining":…,"reset":…`
fn counts_json(out: &mut Vec<u8>, o: &Outcome<'_>) {
    json::raw(out, ",\"limit\":");
    json::int(out, o.limit);
    json::raw(out, ",\"remaining\":");
    json::int(out, o.remaining);
    json::raw(out, ",\"reset\":");
    json::int(out, o.reset_ms);
}

/// `,"overrideId":…` when an override applied.
fn override_json(out: &mut Vec<u8>, o: &Outcome<'_>) {
    if let Some(id) = o.override_id {
        json::raw(out, ",\"overrideId\":");
        json::string(out, id);
    }
}

/// ratelimits.multiLimit's answer: `{passed, limits: [{namespace, identifier, limit,
/// remaining, reset, passed, overrideId?}, …]}` in request order, each namespace as its
/// request named it.
fn multi_json(out: &mut Vec<u8>, outcomes: &[Outcome<'_>], reqs: &[LimitRequest<'_>], namespaces: &[&str]) {
    json::raw(out, "{\"passed\":");
    json::bool(out, outcomes.iter().all(|o| o.success));
    json::raw(out, ",\"limits\":[");
    for (i, ((o, r), ns)) in outcomes.iter().zip(reqs).zip(namespaces).enumerate() {
        json::raw(out, if i > 0 { ",{\"namespace\":" } else { "{\"namespace\":" });
        json::string(out, ns.as_bytes());
        json::raw(out, ",\"identifier\":");
        json::string(out, r.identifier.as_bytes());
        counts_json(out, o);
        json::raw(out, ",\"passed\":");
        json::bool(out, o.success);
        override_json(out, o);
        out.push(b'}');
    }
    json::raw(out, "]}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        let m = |p: &str, t: &str| glob_match(p.as_bytes(), t.as_bytes());
        assert!(m("user_*", "user_1"));
        assert!(m("user_*", "user_"));
        assert!(!m("user_*", "usr_1"));
        assert!(m("*", ""));
        assert!(m("a*b*c", "axxbyyc"));
        assert!(!m("a*b*c", "axxbyy"));
        assert!(m("exact", "exact"));
        assert!(!m("exact", "exactly"));
        assert!(m("*@example.com", "me@example.com"));
    }

    #[test]
    fn long_identifiers_are_hashed() {
        assert_eq!(storage_id("short"), "short");
        assert_eq!(storage_id(&"x".repeat(440)), "x".repeat(440));
        let long = "x".repeat(441);
        let sid = storage_id(&long);
        assert!(sid.starts_with('#') && sid.len() < 50);
    }

    #[test]
    fn identifiers_starting_with_a_hash_sign_are_hashed_too() {
        let long = "y".repeat(500);
        let digest = storage_id(&long).into_owned();
        // The literal digest as an identifier no longer lands on the long identifier's sid.
        let literal = storage_id(&digest);
        assert_ne!(literal, digest);
        assert!(literal.starts_with('#') && literal.len() == digest.len());
        assert_ne!(storage_id("#general"), "#general");
        assert_eq!(storage_id("a#b"), "a#b");
    }
}
