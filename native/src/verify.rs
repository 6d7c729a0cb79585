//! keys.verifyKey: one call, one transaction. Checks run in DESIGN.md's order and the first
//! failing one wins: NOT_FOUND → DISABLED → EXPIRED → INSUFFICIENT_PERMISSIONS →
//! RATE_LIMITED → USAGE_EXCEEDED → VALID. Only a VALID verification changes state (its
//! rate-limit windows and its credits), all in one commit; a refusal consumes nothing.
//!
//! The evaluation first runs over a read-only view; when the outcome would change state it
//! is run again inside a write transaction (re-reading everything, so concurrent callers
//! are serialised by LMDB's writer lock and no update is lost).

use std::borrow::Cow;
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::collections::HashSet;

use crate::context;
use crate::counterlog;
use crate::credits::{self, Credits, Lease};
use crate::hash;
use crate::json;
use crate::memo::{self, Memo};
use crate::msgpack::DecodeError;
use crate::permissions;
use crate::records::{self, IdentityRecord, KeyRecord, RatelimitDef, RoleRecord};
use crate::hot::{self, Effect, KeyBuf, Scratch};
use crate::store::{self, StoreError, Table, View};
use crate::verified::{self, Entry};
use crate::shared::{self, Admission, Admitted, SyncWindow, Windows};
use crate::window::{self, Decision};

pub struct Request<'a> {
    /// The root key's workspace.
    pub workspace_id: &'a str,
    /// APIs the root key may verify: "*" for all, else ids separated by '\n'.
    pub allowed_apis: &'a str,
    pub key: &'a [u8],
    /// The hash the key's record is looked up under; None: the key's SHA-256 (context.rs).
    pub key_hash: Option<&'a [u8; 32]>,
    /// credits.cost of the request; None = 1.
    pub cost: Option<i64>,
    pub query: Option<&'a str>,
    /// Limits named in the request, in request order.
    pub named: Vec<Named<'a>>,
    pub now_ms: i64,
    /// How credits are paid: from the key's record (one node) or, in cluster mode, from this
    /// node's lease or by PostgreSQL (context.rs).
    pub credits: context::Credits,
    /// How rate-limit windows are counted (shared.rs).
    pub windows: Windows,
}

/// One entry of the request's `ratelimits`.
#[derive(Debug, Clone, PartialEq)]
pub struct Named<'a> {
    pub name: Cow<'a, str>,
    pub cost: i64,
    /// `limit` and `duration` (ms) when the entry carries both: an ad-hoc limit, applied for
    /// this call as a key limit of that name (its window is the key's window of that name)
    /// and taking the place of a stored limit of the same name.
    pub ad_hoc: Option<(i64, i64)>,
}

#[derive(Debug)]
pub enum VerifyError {
    Store(StoreError),
    /// The permission query is not valid syntax (HTTP 400).
    Query(String),
    /// A named limit the key and its identity do not have (HTTP 412).
    UnknownLimit(String),
    /// A stored record could not be read (a bug or a corrupt record).
    Corrupt(&'static str),
}

impl From<StoreError> for VerifyError {
    fn from(e: StoreError) -> Self {
        VerifyError::Store(e)
    }
}

impl From<DecodeError> for VerifyError {
    fn from(e: DecodeError) -> Self {
        VerifyError::Corrupt(e.0)
    }
}

const NOT_FOUND: &str = "{\"valid\":false,\"code\":\"NOT_FOUND\"}";

thread_local! {
    /// One bit per group of key hashes (`writer_bit`): set when the last verification of a key
    /// of the group changed state (credits or limits), so that such keys skip the read-only
    /// attempt. Only a hint: the write path re-reads everything, and a key that shares its
    /// bit with another only costs a wasted attempt. A bitmap rather than a set of hashes: a
    /// set of 100,000 writing keys missed the cache twice per verification (control bytes,
    /// then the hash), where these 256 KiB mostly stay in it.
    static WRITERS: RefCell<Vec<u64>> = RefCell::new(vec![0; WRITER_WORDS]);
}

const WRITER_WORDS: usize = 1 << 15;

/// The word and the mask of `hash`'s bit in `WRITERS`, from hash bytes the verification
/// cache does not index by (verified.rs uses the first eight).
fn writer_bit(hash: &[u8; 32]) -> (usize, u64) {
    let n = u64::from_le_bytes(hash[8..16].try_into().expect("8 bytes")) as usize;
    ((n >> 6) & (WRITER_WORDS - 1), 1 << (n & 63))
}

/// Verifies; the `data` JSON of the reply is left in `scratch.out`.
pub fn verify(req: &Request<'_>, scratch: &mut Scratch) -> Result<Effect, VerifyError> {
    let hash = req.key_hash.copied().unwrap_or_else(|| hash::sha256(req.key));
    let cached = verified::with(|cache| cache.get(&hash));
    let reusable = req.query.is_none() && req.named.is_empty();
    if let Some(entry) = cached.as_deref().filter(|_| reusable) {
        if reuse(req, entry, scratch)? {
            verified::count_answer(true);
            return Ok(Effect::Read);
        }
    }
    let (word, bit) = writer_bit(&hash);
    let expect_writes = WRITERS.with(|w| w.borrow()[word] & bit != 0);
    let cache = CacheUse { cached: cached.as_deref(), reusable, record_hit: Cell::new(None), renew: Cell::new(None), keep: Cell::new(None) };
    let effect = hot::run(expect_writes, req.now_ms, scratch, |v, s| evaluate(v, req, &hash, &cache, s))?;
    if let Some(hit) = cache.record_hit.get() {
        verified::count_record(hit);
    }
    // Neither kept nor renewed when read inside an open transaction that changed records: its
    // epoch is not committed and would come back, for other records, if that transaction
    // aborted.
    let committed = !store::uncommitted_record_change();
    if let (Some(entry), Some(epoch), true) = (cached.as_deref(), cache.renew.get(), committed) {
        entry.renew(epoch);
    }
    if let Some(entry) = cache.keep.take().filter(|_| committed) {
        if entry.answer().is_some() {
            verified::count_answer(false);
        }
        verified::with(|c| c.insert(entry));
    }
    let wrote = effect != Effect::Read;
    if wrote != expect_writes {
        WRITERS.with(|w| w.borrow_mut()[word] ^= bit);
    }
    Ok(effect)
}

/// Answers from the cache entry of this key when it holds an answer and that answer still
/// holds for this caller, at this time, under the store's current records epoch.
fn reuse(req: &Request<'_>, entry: &Entry, scratch: &mut Scratch) -> Result<bool, VerifyError> {
    let Some(answer) = entry.answer() else { return Ok(false) };
    if entry.workspace_id() != req.workspace_id.as_bytes() || !in_scope(req.allowed_apis, entry.api_id()) || entry.expired(req.now_ms) {
        return Ok(false);
    }
    if store::view(|v| store::records_epoch(v))? != entry.answer_epoch() {
        return Ok(false);
    }
    scratch.answer_with(answer);
    scratch.subject.clear();
    scratch.subject.extend_from_slice(entry.api_id());
    Ok(true)
}

thread_local! {
    /// The workspaces of the APIs found live (not deleted), by API id, under one records
    /// epoch: every verification asks, and inside a turn's batch the lookup through the write
    /// transaction cost more than a cached key's other reads. Any record change (an API's
    /// deletion is one) moves the epoch.
    static LIVE_APIS: RefCell<Memo<(u64, u64), Box<[u8]>>> = RefCell::new(Memo::new(MAX_LIVE_APIS));
}

/// The most APIs `LIVE_APIS` holds; past that it starts again.
const MAX_LIVE_APIS: usize = 64;

thread_local! {
    /// The permissions of a workspace that were deleted but are not yet taken off its keys
    /// (META `perm_gone/<workspaceId>/<slug>`, written by deletePermission and removed once
    /// its keys are unlinked: store/cascades.ts), by workspace, per records epoch. Usually
    /// none; a key's direct permissions are read without them.
    static GONE_PERMISSIONS: RefCell<Memo<(u64, u64), Rc<[Box<[u8]>]>>> = RefCell::new(Memo::new(MAX_GONE_WORKSPACES));
}

/// The most workspaces `GONE_PERMISSIONS` holds; past that it starts again.
const MAX_GONE_WORKSPACES: usize = 64;

const GONE_PREFIX: &[u8] = b"perm_gone/";

/// The deleted permissions of `workspace_id` still on some of its keys (see GONE_PERMISSIONS).
fn gone_permissions(v: &View<'_>, epoch: Option<(u64, u64)>, workspace_id: &[u8]) -> Result<Rc<[Box<[u8]>]>, VerifyError> {
    let epoch = match epoch {
        Some(e) => e,
        None => store::records_epoch(v)?,
    };
    memo::under_epoch(&GONE_PERMISSIONS, epoch, workspace_id, || {
        let mut prefix = KeyBuf::new();
        let prefix = prefix.of(&[GONE_PREFIX, workspace_id, b"/"]);
        let mut gone: Vec<Box<[u8]>> = Vec::new();
        v.range_prefix(Table::META, prefix, usize::MAX, |k, _| {
            gone.push(k[prefix.len()..].into());
            Ok::<_, StoreError>(())
        })?;
        Ok(gone.into())
    })
}

/// The API `api_id` exists, is not deleted and belongs to `workspace_id`. `epoch` is the
/// view's records epoch (None: not read, as with the verification cache off).
fn api_visible(v: &View<'_>, epoch: Option<(u64, u64)>, api_id: &[u8], workspace_id: &[u8]) -> Result<bool, VerifyError> {
    let seen = |e| LIVE_APIS.with(|l| l.borrow().get(&e, api_id).map(|ws| **ws == *workspace_id));
    if let Some(visible) = epoch.and_then(seen) {
        return Ok(visible);
    }
    let Some(api) = v.get(Table::APIS, api_id)?.map(records::api).transpose()? else { return Ok(false) };
    // Kept only under a committed epoch (not one this thread's transaction moved).
    if let Some(e) = epoch.filter(|_| !api.deleted && !store::uncommitted_record_change()) {
        LIVE_APIS.with(|l| l.borrow_mut().keep(e, api_id, api.workspace_id.into()));
    }
    Ok(!api.deleted && api.workspace_id == workspace_id)
}

/// Whether `id` is in a root key's scope: "*" (every one of the workspace) or ids joined by
/// "\n" (src/auth/permissions.ts scopeOf).
pub fn in_scope(scope: &str, id: &[u8]) -> bool {
    scope == "*" || scope.split('\n').any(|a| a.as_bytes() == id)
}

/// A limit that applies to this verification. Its window is the counter (crate::counterlog)
/// named for `<scope>/<owner>/<name>`: scope "k" with the key id, or "i" with the identity
/// id (identity limits are shared by all keys of the identity).
struct Check<'a> {
    def: &'a RatelimitDef<'a>,
    window: counterlog::Key,
    cost: i64,
    decision: Decision,
    admission: Admission,
}

/// The name of the window `<scope>/<owner>/<name>`.
fn window_key(scope: &'static str, owner: &[u8], name: &[u8]) -> counterlog::Key {
    counterlog::named(counterlog::KEY_WINDOW, &[scope.as_bytes(), b"/", owner, b"/", name])
}

/// What an evaluation learns of and leaves for the verification cache (verified.rs).
struct CacheUse<'c> {
    /// This key's entry when the call began; used when read under the view's records epoch.
    cached: Option<&'c Entry>,
    /// The request is of the kind whose answer the cache may keep (no query, no named limits).
    reusable: bool,
    /// Where the last evaluation read the key's record: the cache (true) or the key table.
    record_hit: Cell<Option<bool>>,
    /// The records epoch to renew `cached`'s record to: the key table held the same record.
    renew: Cell<Option<(u64, u64)>>,
    /// The entry the cache should have for this key after the call (the record, and the
    /// answer when it depends on records alone), left None when the cache has that already.
    keep: Cell<Option<Entry>>,
}

fn evaluate(v: &View<'_>, req: &Request<'_>, hash: &[u8; 32], cache: &CacheUse<'_>, scratch: &mut Scratch) -> Result<(), VerifyError> {
    let out = &mut scratch.out;
    let answer_start = out.len();
    // With the cache off there is nothing to compare with or to keep: no epoch is read.
    let epoch = verified::enabled().then(|| store::records_epoch(v)).transpose()?;
    // What an earlier evaluation of this call (the read-only attempt) left is replaced.
    cache.renew.set(None);
    cache.keep.set(None);
    let cached = cache.cached.filter(|e| Some(e.record_epoch()) == epoch);
    cache.record_hit.set(Some(cached.is_some()));
    let key_bytes = match cached {
        Some(entry) => entry.record(),
        None => match v.get(Table::KEY_RECORDS, hash)? {
            Some(bytes) => bytes,
            None => {
                json::raw(out, NOT_FOUND);
                return Ok(());
            }
        },
    };
    let mut key = records::key(key_bytes)?;
    if let (None, Some(epoch)) = (cached, epoch) {
        match cache.cached {
            Some(entry) if entry.record() == key_bytes => cache.renew.set(Some(epoch)),
            _ => cache.keep.set(Some(Entry::new(*hash, epoch, key.expires_at_ms, key.workspace_id, key.api_id, key_bytes, None))),
        }
    }
    if key.workspace_id != req.workspace_id.as_bytes() || !in_scope(req.allowed_apis, key.api_id) {
        json::raw(out, NOT_FOUND);
        return Ok(());
    }
    if !key.permissions.is_empty() {
        let gone = gone_permissions(v, epoch, key.workspace_id)?;
        if !gone.is_empty() {
            key.permissions.retain(|p| !gone.iter().any(|g| **g == **p));
        }
    }
    // The counters this verification may read are named now and their index lines fetched
    // together (counterlog::prefetch), while the records below are read.
    let credits_key = credits::record_key(key.id);
    let leased = req.credits != context::Credits::Local;
    let lease_key = leased.then(|| credits::lease_key(key.id));
    let own = OwnWindows::of(&key);
    counterlog::prefetch(std::iter::once(&credits_key).chain(lease_key.as_ref()).chain(own.windows()));
    if !api_visible(v, epoch, key.api_id, req.workspace_id.as_bytes())? {
        json::raw(out, NOT_FOUND);
        return Ok(());
    }
    // The analytics event's key space: a key of the caller's (events.rs).
    scratch.subject.clear();
    scratch.subject.extend_from_slice(key.api_id);
    let mut roles: Vec<RoleRecord<'_>> = Vec::new();
    for id in &key.role_ids {
        if let Some(bytes) = v.get(Table::ROLES, id)? {
            roles.push(records::role(bytes)?);
        }
    }
    let identity = match key.identity_id {
        Some(id) => v.get(Table::IDENTITIES, id)?.map(records::identity).transpose()?,
        None => None,
    };
    let stored = counterlog::get(v, &credits_key)?.and_then(|c| Credits::decode(&c));
    // A lease of an epoch before the balance's was voided by a set or a refill.
    let lease = match (&lease_key, stored) {
        (Some(k), Some(c)) => counterlog::get(v, k)?.and_then(|l| Lease::decode(&l)).unwrap_or_default().with_epoch(c.epoch),
        _ => Lease::default(),
    };
    // One node refills lazily here; a cluster's balance is refilled by PostgreSQL (the call
    // declines while one is due), and what a reply shows is this node's best knowledge: the
    // balance it last learnt of and what is left of its lease.
    let credits = match stored {
        Some(c) if !leased => Some(c.refilled(req.now_ms).0),
        Some(c) => Some(Credits { remaining: c.remaining + lease.remaining.max(0), ..c }),
        None => None,
    };
    let reply = Reply { key: &key, roles: &roles, identity: identity.as_ref() };

    if !key.enabled {
        reply.json(out, "DISABLED", credits.map(|c| c.remaining), None);
        return Ok(());
    }
    if key.expires_at_ms.is_some_and(|e| req.now_ms > e) {
        reply.json(out, "EXPIRED", credits.map(|c| c.remaining), None);
        return Ok(());
    }
    if let Some(query) = req.query {
        let q = permissions::parse_cached(query).map_err(|e| VerifyError::Query(e.message))?;
        let held: Vec<&[u8]> = key.permissions.iter().copied().chain(roles.iter().flat_map(|r| r.permissions.iter().copied())).collect();
        if !permissions::evaluate(&q, &held) {
            reply.json(out, "INSUFFICIENT_PERMISSIONS", credits.map(|c| c.remaining), None);
            return Ok(());
        }
    }

    let ad_hoc: Vec<RatelimitDef<'_>> = req
        .named
        .iter()
        .filter_map(|n| n.ad_hoc.map(|(limit, duration_ms)| RatelimitDef { id: b"", name: n.name.as_bytes(), limit, duration_ms, auto_apply: false }))
        .collect();
    let checks = rate_limit_checks(v, req, &key, identity.as_ref(), &ad_hoc, &own)?;
    if checks.iter().any(|c| !c.decision.success) {
        reply.json(out, "RATE_LIMITED", credits.map(|c| c.remaining), Some((&checks, false)));
        return Ok(());
    }
    let sync: Vec<SyncWindow> = checks
        .iter()
        .filter(|c| c.admission == Admission::Sync)
        .map(|c| SyncWindow { key: c.window, seq: c.decision.next.seq, duration_ms: c.decision.next.duration_ms, limit: c.def.limit, cost: c.cost, weight: window::weight(&c.decision.next, req.now_ms) })
        .collect();
    if !sync.is_empty() {
        scratch.need_sync(sync);
        return Ok(());
    }
    let mut balance = None;
    if let (Some(c), Some(stored)) = (credits, stored) {
        let cost = req.cost.unwrap_or(1);
        match req.credits {
            context::Credits::Local => {
                if c.remaining == 0 || c.remaining < cost {
                    reply.json(out, "USAGE_EXCEEDED", Some(c.remaining), Some((&checks, false)));
                    return Ok(());
                }
                balance = Some(c.remaining - cost);
                if cost > 0 {
                    let next = Credits { remaining: c.remaining - cost, ..c };
                    scratch.puts.push(&credits_key, next.encode());
                }
            }
            context::Credits::Paid { balance: left } => {
                balance = Some(left + lease.remaining.max(0));
                scratch.paid_used = true;
            }
            context::Credits::Refused { balance: left } => {
                reply.json(out, "USAGE_EXCEEDED", Some(left + lease.remaining.max(0)), Some((&checks, false)));
                return Ok(());
            }
            context::Credits::Leased => {
                let refill_due = stored.refilled(req.now_ms).1;
                let spendable = if cost == 0 { c.remaining > 0 } else { lease.remaining >= cost };
                if !refill_due && !spendable && stored.exhausted {
                    reply.json(out, "USAGE_EXCEEDED", Some(c.remaining), Some((&checks, false)));
                    return Ok(());
                }
                if refill_due || !spendable {
                    let boundary = refill_due.then(|| credits::last_boundary(req.now_ms, stored.refill_day));
                    scratch.need_credits(key.id, cost, boundary);
                    return Ok(());
                }
                if cost > 0 {
                    let next = Lease { remaining: lease.remaining - cost, ..lease };
                    scratch.puts.push(lease_key.as_ref().expect("leased"), next.encode());
                    if lease.remaining > i64::from(lease.low) && next.remaining <= i64::from(lease.low) {
                        credits::note_low(key.id);
                    }
                    balance = Some(stored.remaining + next.remaining.max(0));
                } else {
                    balance = Some(c.remaining);
                }
            }
        }
    }
    for c in checks.iter().filter(|c| c.cost > 0) {
        scratch.puts.push(&c.window, c.decision.next.encode());
        if c.admission != Admission::None {
            scratch.admitted.push(Admitted { key: c.window, seq: c.decision.next.seq, duration_ms: c.decision.next.duration_ms, limit: c.def.limit, cost: c.cost, admission: c.admission });
        }
    }
    // Spent: the cost, by a key with credits (a balance), as analytics counts spent_credits.
    scratch.spent = if balance.is_some() { req.cost.unwrap_or(1) } else { 0 };
    reply.json(out, "VALID", balance, Some((&checks, true)));
    // Such an answer changed nothing (no credits, no window), so it can be given again for as
    // long as the records it was read from stay.
    let answer_kept = |epoch| cache.cached.is_some_and(|e| e.answer().is_some() && e.answer_epoch() == epoch);
    if let Some(epoch) = epoch.filter(|&epoch| cache.reusable && credits.is_none() && checks.is_empty() && !answer_kept(epoch)) {
        cache.keep.set(Some(Entry::new(*hash, epoch, key.expires_at_ms, key.workspace_id, key.api_id, key_bytes, Some(&out[answer_start..]))));
    }
    Ok(())
}

fn rate_limit_checks<'a>(
    v: &View<'_>,
    req: &Request<'_>,
    key: &'a KeyRecord<'a>,
    identity: Option<&'a IdentityRecord<'a>>,
    ad_hoc: &'a [RatelimitDef<'a>],
    own: &OwnWindows<'_>,
) -> Result<Vec<Check<'a>>, VerifyError> {
    // Ad-hoc limits (the last one of a name wins) shadow stored limits of the same name, and
    // key limits shadow identity limits of the same name.
    let mut defs: Vec<(&'a RatelimitDef<'a>, &'static str, &'a [u8])> = Vec::new();
    for (n, d) in ad_hoc.iter().enumerate() {
        if !ad_hoc[n + 1..].iter().any(|later| later.name == d.name) {
            defs.push((d, "k", key.id));
        }
    }
    for d in &key.ratelimits {
        if !ad_hoc.iter().any(|a| a.name == d.name) {
            defs.push((d, "k", key.id));
        }
    }
    if let Some(i) = identity {
        for d in &i.ratelimits {
            if !key.ratelimits.iter().chain(ad_hoc).any(|k| k.name == d.name) {
                defs.push((d, "i", i.id));
            }
        }
    }
    for n in &req.named {
        if !defs.iter().any(|(d, _, _)| d.name == n.name.as_bytes()) {
            return Err(VerifyError::UnknownLimit(n.name.clone().into_owned()));
        }
    }
    let mut checks = Vec::with_capacity(defs.len());
    for (def, scope, owner) in defs {
        // A named limit's cost replaces the automatic cost of 1 (the last mention wins).
        let cost = match req.named.iter().rev().find(|n| n.name.as_bytes() == def.name) {
            Some(n) => n.cost,
            None if def.auto_apply => 1,
            None => continue,
        };
        let window = own.get(scope, def.name).unwrap_or_else(|| window_key(scope, owner, def.name));
        let stored = counterlog::get(v, &window)?.and_then(|w| window::Window::decode(&w));
        let s = shared::decide(req.windows, &window, stored, req.now_ms, def.duration_ms, def.limit, cost);
        checks.push(Check { def, window, cost, decision: s.decision, admission: s.admission });
    }
    Ok(checks)
}

/// The windows of the key's own automatic limits (the first `OWN_WINDOWS`), named once and
/// fetched ahead (see `evaluate`). A key window's name depends only on the limit's name
/// (`window_key("k", key id, name)`), so an ad-hoc limit of the same name finds it here too.
struct OwnWindows<'a> {
    /// (limit name, its window), the first `len` in use.
    named: [(&'a [u8], counterlog::Key); OWN_WINDOWS],
    len: usize,
}

const OWN_WINDOWS: usize = 4;

impl<'a> OwnWindows<'a> {
    fn of(key: &KeyRecord<'a>) -> OwnWindows<'a> {
        let mut own = OwnWindows { named: [(&[], [0; 16]); OWN_WINDOWS], len: 0 };
        for d in key.ratelimits.iter().filter(|d| d.auto_apply).take(OWN_WINDOWS) {
            own.named[own.len] = (d.name, window_key("k", key.id, d.name));
            own.len += 1;
        }
        own
    }

    fn windows(&self) -> impl Iterator<Item = &counterlog::Key> {
        self.named[..self.len].iter().map(|(_, window)| window)
    }

    /// The window of the limit `name` in `scope`, when it is named here.
    fn get(&self, scope: &str, name: &[u8]) -> Option<counterlog::Key> {
        if scope != "k" {
            return None;
        }
        self.named[..self.len].iter().find(|(n, _)| *n == name).map(|&(_, window)| window)
    }
}

struct Reply<'r, 'a> {
    key: &'r KeyRecord<'a>,
    roles: &'r [RoleRecord<'a>],
    identity: Option<&'r IdentityRecord<'a>>,
}

impl Reply<'_, '_> {
    /// The fields of unkey-v2.md §3.2 for a found key: `ratelimits` only once limits were
    /// evaluated (`admitted`: whether their cost was consumed).
    fn json(&self, out: &mut Vec<u8>, code: &str, credits: Option<i64>, limits: Option<(&[Check<'_>], bool)>) {
        let k = self.key;
        json::raw(out, if code == "VALID" { "{\"valid\":true,\"code\":\"" } else { "{\"valid\":false,\"code\":\"" });
        json::raw(out, code);
        json::raw(out, "\",\"keyId\":");
        json::string(out, k.id);
        if let Some(name) = k.name {
            json::raw(out, ",\"name\":");
            json::string(out, name);
        }
        if let Some(meta) = k.meta_json {
            json::raw(out, ",\"meta\":");
            out.extend_from_slice(meta);
        }
        if let Some(expires) = k.expires_at_ms {
            json::raw(out, ",\"expires\":");
            json::int(out, expires);
        }
        if let Some(c) = credits {
            json::raw(out, ",\"credits\":");
            json::int(out, c);
        }
        json::raw(out, ",\"enabled\":");
        json::bool(out, k.enabled);
        if !k.permissions.is_empty() || self.roles.iter().any(|r| !r.permissions.is_empty()) {
            // Each once, in the order first held: a scan of what is kept for a few, a set for
            // many (a key may hold 1,000 permissions and 100 roles of as many more, where the
            // scan alone took about a millisecond per verification).
            let held = k.permissions.iter().chain(self.roles.iter().flat_map(|r| r.permissions.iter())).copied();
            let total = k.permissions.len() + self.roles.iter().map(|r| r.permissions.len()).sum::<usize>();
            let mut permissions: Vec<&[u8]> = Vec::with_capacity(total);
            if total <= 32 {
                for p in held {
                    if !permissions.contains(&p) {
                        permissions.push(p);
                    }
                }
            } else {
                let mut seen = HashSet::with_capacity(total);
                permissions.extend(held.filter(|p| seen.insert(*p)));
            }
            json::raw(out, ",\"permissions\":");
            json::strings(out, permissions);
        }
        if !self.roles.is_empty() {
            json::raw(out, ",\"roles\":");
            json::strings(out, self.roles.iter().map(|r| r.name));
        }
        if let Some(i) = self.identity {
            json::raw(out, ",\"identity\":{\"id\":");
            json::string(out, i.id);
            json::raw(out, ",\"externalId\":");
            json::string(out, i.external_id);
            if let Some(meta) = i.meta_json {
                json::raw(out, ",\"meta\":");
                out.extend_from_slice(meta);
            }
            if !i.ratelimits.is_empty() {
                json::raw(out, ",\"ratelimits\":[");
                for (n, d) in i.ratelimits.iter().enumerate() {
                    json::raw(out, if n > 0 { ",{\"id\":" } else { "{\"id\":" });
                    json::string(out, d.id);
                    json::raw(out, ",\"name\":");
                    json::string(out, d.name);
                    json::raw(out, ",\"limit\":");
                    json::int(out, d.limit);
                    json::raw(out, ",\"duration\":");
                    json::int(out, d.duration_ms);
                    json::raw(out, ",\"autoApply\":");
                    json::bool(out, d.auto_apply);
                    out.push(b'}');
                }
                out.push(b']');
            }
            out.push(b'}');
        }
        if let Some((checks, admitted)) = limits.filter(|(c, _)| !c.is_empty()) {
            json::raw(out, ",\"ratelimits\":[");
            for (n, c) in checks.iter().enumerate() {
                // Nothing is consumed when the verification is refused: a limit that would
                // have admitted this call reports the capacity it still has.
                let remaining = if c.decision.success && !admitted { (c.decision.remaining + c.cost).min(c.def.limit) } else { c.decision.remaining };
                json::raw(out, if n > 0 { ",{\"id\":" } else { "{\"id\":" });
                json::string(out, c.def.id);
                json::raw(out, ",\"name\":");
                json::string(out, c.def.name);
                json::raw(out, ",\"limit\":");
                json::int(out, c.def.limit);
                json::raw(out, ",\"duration\":");
                json::int(out, c.def.duration_ms);
                json::raw(out, ",\"remaining\":");
                json::int(out, remaining);
                json::raw(out, ",\"reset\":");
                json::int(out, c.decision.reset_ms);
                json::raw(out, ",\"exceeded\":");
                json::bool(out, !c.decision.success);
                json::raw(out, ",\"autoApply\":");
                json::bool(out, c.def.auto_apply);
                out.push(b'}');
            }
            out.push(b']');
        }
        out.push(b'}');
    }
}
