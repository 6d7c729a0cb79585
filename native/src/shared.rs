//! Rate-limit windows shared by a cluster's nodes through Redis (docs/cluster.md, "Rate
//! limits"). A node keeps counting its own admissions in its store (window.rs records, as one
//! node does); Redis keeps the cluster's count of every bucket, and each node's part of it.
//! Admissions are granted by Redis before they are made, so the cluster's count never passes
//! a limit:
//!
//! - a call that finds a grant here (`token`: admissions Redis counted for this node and no
//!   call made yet) takes from it, in its own transaction, with no Redis on its way;
//! - else, when this node's count plus the other nodes' as Redis said them within `FRESH_MS`
//!   plus its grant already passes the limit, it is refused here (and the next batch asks
//!   Redis again, so a flood of refusals stays current);
//! - else the call declines with a sync need: a Lua script decides it on the cluster's count
//!   (window.rs's rule), and when admitted counts a grant for this node — the call's cost and
//!   a share of what is left, `(limit − count) ÷ (4 × live nodes)`, so that all nodes
//!   together hold at most a quarter of it and grants shrink to one call near the limit — and
//!   says the other nodes' count back (`learn`); the call is made again and takes from it.
//!
//! A grant no call took from for `GRANT_KEEP_MS` goes back to Redis with the next batch (every
//! few tens of ms, src/cluster/windows.ts: `drain`, then `learn`, which also keeps what this
//! node knows of the others' counts current for its refusals, for windows with no grant). So the count is never above
//! the limit, and below it by at most what grants idle nodes hold, for `GRANT_KEEP_MS`.
//!
//! Redis away (`Windows::Split`), each node decides alone within its share: its own count
//! within limit ÷ live nodes (taking from the grant it holds first), and everything it knows
//! within the limit; what it admits beyond its grant is pushed to Redis once it is back
//! (`pending`). So in a bucket Redis leaves in, the fleet passes at most the limit plus what
//! nodes had counted beyond their share when it left (none when calls spread evenly;
//! docs/cluster.md, "Rate limits").
//!
//! The state is in memory, one map per process, shared by its serving threads; a node that
//! restarts learns the other nodes' counts again (its own stay in its store); the grant it
//! held counts in Redis as used until the bucket ends.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use crate::counterlog::Key;
use crate::window::{self, Decision, Window};

/// How a call's windows are counted (the context's flags).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Windows {
    /// This node's counts alone (one node, or a cluster without Redis).
    Own,
    /// Shared through Redis with `nodes` live nodes; `granted`: the call is made again after
    /// Redis granted its windows (it may take from grants other calls wait for).
    Shared { nodes: u32, granted: bool },
    /// Redis away: each of `nodes` live nodes within its share.
    Split { nodes: u32 },
}

/// One bucket of a window, as this node knows it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Bucket {
    seq: i64,
    /// The other nodes' count, as Redis last said.
    others: i64,
    /// Admissions Redis has not counted yet (made ahead of it, or while it was away).
    pending: i64,
    /// The limit the last admission was decided against (a batch asks for a grant of it).
    limit: i64,
    /// Admissions Redis granted this node that no call made yet.
    token: i64,
    /// When Redis last granted some, and when a call last took from the grant (ms).
    granted_at_ms: i64,
    used_at_ms: i64,
    /// When Redis last said `others` (ms; 0: never).
    learnt_at_ms: i64,
    /// This node's calls checking the bucket with Redis now (between `take` and `release`),
    /// and their costs: while any is, the grant stays, and that much of it is theirs.
    syncing: i64,
    reserved: i64,
}

/// How long what Redis said of the other nodes' counts is enough to refuse a call here; older,
/// grants may have gone back since, and Redis decides.
pub const FRESH_MS: i64 = 100;

/// A node admits ahead of Redis while what it has not pushed stays within what the limit
/// leaves ÷ (`AHEAD` × live nodes): all nodes together stay within 1/`AHEAD` of it per batch.
pub const AHEAD: i64 = 64;

/// How long a grant no call used stays with this node before it goes back to Redis.
pub const GRANT_KEEP_MS: i64 = 2_000;

#[derive(Debug, Default)]
struct Entry {
    duration_ms: i64,
    /// By bucket parity: the current bucket and the one before.
    buckets: [Bucket; 2],
    /// Decided since the last drain: its counts are asked for again.
    touched: bool,
}

impl Entry {
    /// The bucket `seq`, emptied first when it held an older one.
    fn bucket(&mut self, seq: i64) -> &mut Bucket {
        let b = &mut self.buckets[seq.rem_euclid(2) as usize];
        if b.seq != seq {
            *b = Bucket { seq, ..Bucket::default() };
        }
        b
    }

    fn peek(&self, seq: i64) -> Bucket {
        let b = self.buckets[seq.rem_euclid(2) as usize];
        if b.seq == seq { b } else { Bucket { seq, ..Bucket::default() } }
    }
}

/// What one node knows of the shared windows (one per process: `STATE`).
#[derive(Debug, Default)]
pub struct Counts {
    map: HashMap<Key, Entry>,
}

static STATE: Mutex<Option<Counts>> = Mutex::new(None);

fn state() -> MutexGuard<'static, Option<Counts>> {
    STATE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs `f` on this process's counts.
pub fn with<R>(f: impl FnOnce(&mut Counts) -> R) -> R {
    f(state().get_or_insert_with(Counts::default))
}

/// What a shared decision does once the call commits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admission {
    /// Nothing shared (one node's window, a refusal, or a cost of 0).
    None,
    /// Counted here; pushed with the next batch.
    Pending,
    /// Redis counted it already (a sync check's token).
    Token,
    /// Only Redis can decide: the call declines with a sync need.
    Sync,
}

/// A decision and what it does to the shared state.
#[derive(Clone, Copy, Debug)]
pub struct Shared {
    pub decision: Decision,
    pub admission: Admission,
}

/// Decides `cost` against `limit` per `duration_ms` on the window `key` (this node's record
/// `stored`) at `now_ms`, counted as `mode` says.
pub fn decide(mode: Windows, key: &Key, stored: Option<Window>, now_ms: i64, duration_ms: i64, limit: i64, cost: i64) -> Shared {
    if mode == Windows::Own {
        return Shared { decision: window::decide(stored, now_ms, duration_ms, limit, cost), admission: Admission::None };
    }
    with(|c| c.decide(mode, key, stored, now_ms, duration_ms, limit, cost))
}

/// An admission to apply once the call's transaction is written (hot.rs).
#[derive(Clone, Copy, Debug)]
pub struct Admitted {
    pub key: Key,
    pub seq: i64,
    pub duration_ms: i64,
    pub limit: i64,
    pub cost: i64,
    pub admission: Admission,
}

/// Applies a call's admissions, made at `now_ms`.
pub fn apply(admitted: &[Admitted], now_ms: i64) {
    if !admitted.is_empty() {
        with(|c| c.apply(admitted, now_ms));
    }
}

/// A window a call needs Redis to decide (a sync need).
#[derive(Clone, Debug)]
pub struct SyncWindow {
    pub key: Key,
    pub seq: i64,
    pub duration_ms: i64,
    pub limit: i64,
    pub cost: i64,
    /// The previous bucket's weight numerator at the call's time (window::weight).
    pub weight: i64,
}

/// A bucket for the next batch: what it gives Redis is taken (it is on its way there).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Drained {
    pub key: Key,
    pub seq: i64,
    pub duration_ms: i64,
    /// Admissions Redis has not counted, to add to its count.
    pub pending: i64,
    /// An unused grant, to take off its count.
    pub returned: i64,
    /// With admissions made ahead of Redis and no grant here: the limit to ask for a grant
    /// of (the calls to come take from it); else 0.
    pub grant_of: i64,
}

impl Counts {
    fn entry(&mut self, key: &Key, duration_ms: i64) -> &mut Entry {
        let e = self.map.entry(*key).or_default();
        if e.duration_ms != duration_ms {
            *e = Entry { duration_ms, ..Entry::default() };
        }
        e
    }

    /// See `decide` (mode Shared or Split).
    pub fn decide(&mut self, mode: Windows, key: &Key, stored: Option<Window>, now_ms: i64, duration_ms: i64, limit: i64, cost: i64) -> Shared {
        let own = window::rolled(stored, now_ms, duration_ms);
        let (nodes, split) = match mode {
            Windows::Own => return Shared { decision: window::decide_on(own, now_ms, limit, cost), admission: Admission::None },
            Windows::Shared { nodes, .. } => (i64::from(nodes.max(1)), false),
            Windows::Split { nodes } => (i64::from(nodes.max(1)), true),
        };
        let (current, previous) = match self.map.get(key).filter(|e| e.duration_ms == own.duration_ms) {
            Some(e) => (e.peek(own.seq), e.peek(own.seq - 1)),
            None => (Bucket { seq: own.seq, ..Bucket::default() }, Bucket { seq: own.seq - 1, ..Bucket::default() }),
        };
        // A grant is in the cluster's count already; a call that takes from it was counted
        // within the limit by Redis.
        let tokens = current.token;
        // What calls waiting for Redis asked for is theirs: a call made again after its grant
        // takes from all, a new call only from the rest (else under contention the waiting
        // calls find their grants taken, again and again).
        let free = if matches!(mode, Windows::Shared { granted: true, .. }) { tokens } else { tokens - current.reserved };
        let taking = if cost > 0 && free >= cost { cost } else { 0 };
        let all = Window { current: own.current + current.others + tokens - taking, previous: own.previous + previous.others, ..own };
        let known = window::decide_on(all, now_ms, limit, cost);
        let admitted = Decision { success: true, next: Window { current: own.current + cost, ..own }, ..known };
        if taking > 0 && !split {
            return Shared { decision: admitted, admission: Admission::Token };
        }
        // What this node stores: its own count (and its own record, unchanged, when refused).
        let refused = Decision { success: false, remaining: 0, next: own, ..known };
        if !known.success {
            // Refused here on what Redis said lately (and the next batch asks again, so a
            // flood of refusals stays current), or on this node's count alone; else Redis decides.
            let fresh = now_ms - current.learnt_at_ms <= FRESH_MS;
            if split || cost == 0 || fresh || !window::decide_on(own, now_ms, limit, cost).success {
                if let Some(e) = self.map.get_mut(key) {
                    e.touched = true;
                }
                return Shared { decision: refused, admission: Admission::None };
            }
            return Shared { decision: admitted, admission: Admission::Sync };
        }
        if cost == 0 {
            return Shared { decision: admitted, admission: Admission::None };
        }
        if split {
            // The grant held when Redis went away is taken from within the share too, so a
            // node that held more than its share passes no more than it had counted.
            let within_share = window::decide_on(own, now_ms, limit / nodes, cost).success;
            let admission = if taking > 0 { Admission::Token } else { Admission::Pending };
            return if within_share { Shared { decision: admitted, admission } } else { Shared { decision: refused, admission: Admission::None } };
        }
        // Far from the limit (what it leaves, as this node knows it, at least 64 × live nodes
        // times what this node has not pushed yet), admitted here and pushed with the next
        // batch, which asks for a grant too: the first calls of a window need no Redis.
        let headroom = known.remaining + cost;
        if (current.pending + cost).saturating_mul(AHEAD * nodes) <= headroom {
            return Shared { decision: admitted, admission: Admission::Pending };
        }
        Shared { decision: admitted, admission: Admission::Sync }
    }

    pub fn apply(&mut self, admitted: &[Admitted], now_ms: i64) {
        for a in admitted {
            let e = self.entry(&a.key, a.duration_ms);
            e.touched = true;
            let b = e.bucket(a.seq);
            b.limit = a.limit;
            match a.admission {
                Admission::Pending => b.pending += a.cost,
                Admission::Token => {
                    b.token = (b.token - a.cost).max(0);
                    b.used_at_ms = now_ms;
                }
                Admission::None | Admission::Sync => {}
            }
        }
    }

    /// Takes this node's pending count of a window's bucket for a sync check of a call of
    /// `cost` (it goes to Redis with the check, so no batch sends it again); the call releases
    /// the bucket (`release`) once it answered.
    pub fn take(&mut self, key: &Key, seq: i64, duration_ms: i64, cost: i64) -> i64 {
        let b = self.entry(key, duration_ms).bucket(seq);
        b.syncing += 1;
        b.reserved += cost;
        std::mem::take(&mut b.pending)
    }

    /// The buckets to push or ask Redis for at `now_ms` (every window with no grant left
    /// decided since the last drain, any with admissions Redis has not had, any with a grant
    /// no call took from for `GRANT_KEEP_MS`), taking what they give back; forgets windows
    /// nothing counts in any more.
    pub fn drain(&mut self, now_ms: i64) -> Vec<Drained> {
        let mut out = Vec::new();
        self.map.retain(|key, e| {
            let seq = now_ms.div_euclid(e.duration_ms.max(1));
            if e.buckets.iter().all(|b| b.seq < seq - 1 && b.syncing == 0) {
                return false;
            }
            for b in e.buckets.iter_mut().filter(|b| b.seq >= seq - 1) {
                let idle = b.token > 0 && b.syncing == 0 && now_ms - b.granted_at_ms.max(b.used_at_ms) >= GRANT_KEEP_MS;
                let returned = if idle { std::mem::take(&mut b.token) } else { 0 };
                // The others' count matters to refusals here, which only a window with no
                // grant left makes: one with a grant is not read.
                if b.pending > 0 || returned > 0 || (e.touched && b.seq == seq && b.token == 0) {
                    let grant_of = if b.pending > 0 && b.token == 0 && returned == 0 && b.seq == seq { b.limit } else { 0 };
                    out.push(Drained { key: *key, seq: b.seq, duration_ms: e.duration_ms, pending: std::mem::take(&mut b.pending), returned, grant_of });
                }
            }
            e.touched = false;
            true
        });
        out
    }

    /// What Redis said of a window (`Learnt`). The last word wins: a count given back (a
    /// grant no call used) is seen going down.
    pub fn learn(&mut self, key: &Key, l: &Learnt) {
        let e = self.entry(key, l.duration_ms);
        let b = e.bucket(l.seq);
        b.others = l.others;
        b.learnt_at_ms = b.learnt_at_ms.max(l.at_ms);
        if l.admitted > 0 {
            b.token += l.admitted;
            b.granted_at_ms = l.at_ms;
        }
        e.bucket(l.seq - 1).others = l.others_previous;
    }

    /// A call of `cost` that checked the bucket with Redis (`take`) answered: the grant left is
    /// no longer kept for it (it goes back once unused for `GRANT_KEEP_MS`).
    pub fn release(&mut self, key: &Key, seq: i64, duration_ms: i64, cost: i64) {
        let b = self.entry(key, duration_ms).bucket(seq);
        b.syncing = (b.syncing - 1).max(0);
        b.reserved = if b.syncing == 0 { 0 } else { (b.reserved - cost).max(0) };
    }
}

/// See `Counts::take`.
pub fn take(key: &Key, seq: i64, duration_ms: i64, cost: i64) -> i64 {
    with(|c| c.take(key, seq, duration_ms, cost))
}

/// See `Counts::drain`.
pub fn drain(now_ms: i64) -> Vec<Drained> {
    with(|c| c.drain(now_ms))
}

/// What Redis said of a window at `at_ms`: the other nodes' counts in bucket `seq` and in the
/// one before, and `admitted`: what a sync check granted this node (for its next calls).
#[derive(Clone, Copy, Debug)]
pub struct Learnt {
    pub seq: i64,
    pub duration_ms: i64,
    pub others: i64,
    pub others_previous: i64,
    pub admitted: i64,
    pub at_ms: i64,
}

/// See `Counts::learn`.
pub fn learn(key: &Key, l: &Learnt) {
    with(|c| c.learn(key, l));
}

/// See `Counts::release`.
pub fn release(key: &Key, seq: i64, duration_ms: i64, cost: i64) {
    with(|c| c.release(key, seq, duration_ms, cost));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The state is one per process: the tests take turns.
    static TURN: Mutex<()> = Mutex::new(());

    fn turn() -> MutexGuard<'static, ()> {
        TURN.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn key(n: u8) -> Key {
        let mut k = [0u8; 16];
        k[0] = 0x01;
        k[1] = n;
        k[2] = 0xfe;
        k
    }

    #[test]
    fn one_node_decides_alone() {
        let _turn = turn();
        let d = decide(Windows::Own, &key(1), None, 1_000, 1_000, 10, 1);
        assert!(d.decision.success);
        assert_eq!(d.admission, Admission::None);
    }

    fn admit(k: &Key, own: &mut Option<Window>, now: i64) -> Admission {
        let d = decide(Windows::Shared { nodes: 3, granted: false }, k, *own, now, 10_000, 100, 1);
        if d.decision.success && d.admission != Admission::Sync {
            apply(&[Admitted { key: *k, seq: d.decision.next.seq, duration_ms: 10_000, limit: 100, cost: 1, admission: d.admission }], now);
            *own = Some(d.decision.next);
        }
        if d.decision.success { d.admission } else { Admission::None }
    }

    #[test]
    fn calls_take_from_a_grant_then_ask_redis_and_are_refused_here_once_the_limit_is_known_passed() {
        let _turn = turn();
        let k = key(2);
        let mut own: Option<Window> = None;
        // Nothing granted: Redis decides.
        assert_eq!(admit(&k, &mut own, 5_000), Admission::Sync);
        // Redis granted 8 (others have 4): 8 calls take from it with no Redis.
        learn(&k, &Learnt { seq: 0, duration_ms: 10_000, others: 4, others_previous: 0, admitted: 8, at_ms: 5_000 });
        for _ in 0..8 {
            assert_eq!(admit(&k, &mut own, 5_001), Admission::Token);
        }
        assert_eq!(admit(&k, &mut own, 5_001), Admission::Sync);
        // The others have 92: with this node's 8 the limit is reached, refused here.
        learn(&k, &Learnt { seq: 0, duration_ms: 10_000, others: 92, others_previous: 0, admitted: 0, at_ms: 5_002 });
        assert_eq!(admit(&k, &mut own, 5_003), Admission::None);
    }

    /// A node of the simulation: its counts, its own window record.
    struct Node {
        counts: Counts,
        own: Option<Window>,
    }

    /// `nodes` nodes each making `rate` calls a millisecond (taking turns call by call) and
    /// pushing every `flush_ms`, against one Redis (per bucket: the count, each node's part),
    /// as windows.ts and its scripts do, for `ms` milliseconds: what passes.
    fn simulate(nodes: u32, rate: usize, flush_ms: i64, ms: i64, limit: i64) -> i64 {
        let k = key(9);
        let mode = Windows::Shared { nodes, granted: false };
        let duration = 1_000_000;
        let mut redis: HashMap<i64, (i64, Vec<i64>)> = HashMap::new();
        let mut fleet: Vec<Node> = (0..nodes).map(|_| Node { counts: Counts::default(), own: None }).collect();
        let mut add = |seq: i64, node: usize, amount: i64| {
            let (total, mine) = redis.entry(seq).or_insert_with(|| (0, vec![0; nodes as usize]));
            *total += amount;
            mine[node] += amount;
            (*total, *total - mine[node])
        };
        let mut passed = 0;
        for now in 1_000..1_000 + ms {
            for _ in 0..rate {
                for (i, n) in fleet.iter_mut().enumerate() {
                    for _attempt in 0..3 {
                        let d = n.counts.decide(mode, &k, n.own, now, duration, limit, 1);
                        if !d.decision.success {
                            break;
                        }
                        if d.admission == Admission::Sync {
                            // The CHECK script: the cost and a share of what is left.
                            let seq = d.decision.next.seq;
                            let pending = n.counts.take(&k, seq, duration, 1);
                            let (total, _) = add(seq, i, pending);
                            let grant = if total + 1 <= limit { ((limit - total) / (4 * i64::from(nodes))).max(1) } else { 0 };
                            let (_, others) = add(seq, i, grant);
                            n.counts.learn(&k, &Learnt { seq, duration_ms: duration, others, others_previous: 0, admitted: grant, at_ms: now });
                            n.counts.release(&k, seq, duration, 1);
                            continue;
                        }
                        n.counts.apply(&[Admitted { key: k, seq: d.decision.next.seq, duration_ms: duration, limit, cost: 1, admission: d.admission }], now);
                        n.own = Some(d.decision.next);
                        passed += 1;
                        break;
                    }
                }
            }
            // The nodes' batches, each on its own phase of the interval.
            for (i, n) in fleet.iter_mut().enumerate() {
                if (now + i as i64 * flush_ms / i64::from(nodes)) % flush_ms == 0 {
                    for d in n.counts.drain(now) {
                        let (total, _) = add(d.seq, i, d.pending - d.returned);
                        let grant = if d.grant_of > 0 { ((d.grant_of - total) / (4 * i64::from(nodes))).max(0) } else { 0 };
                        let (_, others) = add(d.seq, i, grant);
                        n.counts.learn(&d.key, &Learnt { seq: d.seq, duration_ms: d.duration_ms, others, others_previous: 0, admitted: grant, at_ms: now });
                    }
                }
            }
        }
        passed
    }

    #[test]
    fn a_large_limit_is_passed_by_at_most_a_thirty_second_of_it() {
        // (nodes, calls a ms on each, ms between a node's batches), limit 10,000 in 400 ms.
        for (nodes, rate, flush_ms) in [(2, 20, 25), (3, 20, 25), (3, 40, 50), (5, 10, 25), (10, 5, 50)] {
            let passed = simulate(nodes, rate, flush_ms, 400, 10_000);
            assert!((9_700..=10_000 + 10_000 / 32).contains(&passed), "{nodes} nodes, {rate} calls/ms, batches every {flush_ms} ms: {passed} passed");
        }
    }

    #[test]
    fn nodes_counting_at_once_never_pass_the_limit_and_strand_little() {
        // (nodes, calls a ms on each, ms between a node's batches).
        for (nodes, rate, flush_ms) in [(2, 1, 25), (3, 1, 25), (3, 10, 25), (3, 10, 50), (5, 4, 25), (10, 2, 50)] {
            let passed = simulate(nodes, rate, flush_ms, 300, 100);
            assert!((97..=100).contains(&passed), "{nodes} nodes, {rate} calls/ms, batches every {flush_ms} ms: {passed} passed");
        }
    }

    #[test]
    fn redis_away_each_node_keeps_to_its_share() {
        let _turn = turn();
        let k = key(3);
        let mode = Windows::Split { nodes: 3 };
        let mut own: Option<Window> = None;
        let mut passed = 0;
        for _ in 0..50 {
            let d = decide(mode, &k, own, 0, 10_000, 100, 1);
            if !d.decision.success {
                break;
            }
            own = Some(d.decision.next);
            passed += 1;
        }
        assert_eq!(passed, 33);
    }

    #[test]
    fn what_redis_has_not_had_goes_with_a_check_or_a_batch_and_an_unused_grant_goes_back() {
        let _turn = turn();
        let k = key(4);
        apply(&[Admitted { key: k, seq: 0, duration_ms: 10_000, limit: 100, cost: 3, admission: Admission::Pending }], 7_000);
        // Two calls check the bucket; the first takes the pending count with it.
        assert_eq!(take(&k, 0, 10_000, 1), 3);
        assert_eq!(take(&k, 0, 10_000, 1), 0);
        learn(&k, &Learnt { seq: 0, duration_ms: 10_000, others: 4, others_previous: 0, admitted: 2, at_ms: 7_000 });
        release(&k, 0, 10_000, 1);
        // Kept while a call that checked may take from it, and for GRANT_KEEP_MS after.
        assert!(drain(7_000 + GRANT_KEEP_MS).iter().all(|d| d.key != k || d.returned == 0));
        release(&k, 0, 10_000, 1);
        assert!(drain(7_000 + GRANT_KEEP_MS - 1).iter().all(|d| d.key != k || d.returned == 0));
        let back: Vec<Drained> = drain(7_000 + GRANT_KEEP_MS).into_iter().filter(|d| d.key == k).collect();
        assert_eq!(back, vec![Drained { key: k, seq: 0, duration_ms: 10_000, pending: 0, returned: 2, grant_of: 0 }]);
        // Long after, the window is forgotten.
        drain(40_000);
        assert!(with(|c| !c.map.contains_key(&k)));
    }
}
