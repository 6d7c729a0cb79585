//! Exports of a key's credits: its record as management reads and writes it (one node and
//! cluster alike), and in cluster mode this node's lease of them (credits.rs `Lease`), which
//! src/cluster/credits.ts keeps in step with PostgreSQL.
//!
//! The writes (`creditsSet`, `creditsDelete`, `creditsApply`, `leaseGrant`, `leaseGiveBack`)
//! run only inside a `transaction`.

use super::args::{bool_arg, int_arg, key_id_arg, KEY_STACK};
use super::{bad, Error};
use crate::counterlog;
use crate::credits::{self, any_before, Credits, Lease, CREDITS_WRITES};
use crate::napi::{napi_value, Env};
use crate::store::{self, View};

fn stored(v: &View<'_>, key_id: &[u8]) -> Result<Option<Credits>, Error> {
    Ok(counterlog::get(v, &credits::record_key(key_id))?.and_then(|c| Credits::decode(&c)))
}

/// This node's lease of the key's credits under their current epoch, if any.
fn current_lease(key_id: &[u8]) -> Result<Option<Lease>, Error> {
    Ok(store::view(|v| match stored(v, key_id)? {
        Some(c) => lease(v, key_id, c.epoch),
        None => Ok(None),
    })?)
}

/// This node's lease of the key, voided (as none) when the balance moved to a later epoch.
fn lease(v: &View<'_>, key_id: &[u8], epoch: u32) -> Result<Option<Lease>, Error> {
    Ok(counterlog::get(v, &credits::lease_key(key_id))?.and_then(|l| Lease::decode(&l)).map(|l| l.with_epoch(epoch)))
}

fn numbers(env: Env, values: &[i64]) -> Result<napi_value, Error> {
    let out = env.array(values.len())?;
    for (i, v) in values.iter().enumerate() {
        env.set_element(out, i as u32, env.double(*v as f64)?)?;
    }
    Ok(out)
}

/// creditsGet(keyId, nowMs): [remaining, refillAmount, refillDay, lastRefillAtMs] | undefined
/// — the balance as of nowMs with a due refill applied to the view (nothing is written). In
/// cluster mode: the balance this node last learnt of plus what is left of its lease (its
/// best knowledge).
pub fn credits_get(env: Env, args: &[napi_value; 2]) -> Result<napi_value, Error> {
    let mut stack = [0u8; KEY_STACK];
    let key = key_id_arg(env, args[0], &mut stack)?;
    let now_ms = int_arg(env, args[1], "nowMs")?;
    let found = store::view(|v| {
        let Some(c) = stored(v, key)? else { return Ok::<_, Error>(None) };
        let held = lease(v, key, c.epoch)?.map_or(0, |l| l.remaining.max(0));
        Ok(Some(Credits { remaining: c.remaining + held, ..c }))
    })?;
    let Some(c) = found else { return Ok(env.undefined()?) };
    let (c, _) = c.refilled(now_ms);
    numbers(env, &[c.remaining, c.refill_amount, c.refill_day, c.last_refill_at_ms])
}

fn credits_args(env: Env, args: &[napi_value]) -> Result<Credits, Error> {
    let [remaining, refill_amount, refill_day, last_refill_at_ms] =
        [(0, "remaining"), (1, "refillAmount"), (2, "refillDay"), (3, "lastRefillAtMs")].map(|(i, what)| int_arg(env, args[i], what));
    Credits::new(remaining?, refill_amount?, refill_day?, last_refill_at_ms?).ok_or_else(|| bad("credits out of range"))
}

/// creditsSet(keyId, remaining, refillAmount, refillDay, lastRefillAtMs): void — inside a
/// transaction. remaining ≥ 0; refillAmount −1 (none) or ≥ 1; refillDay 0 or 1–31.
pub fn credits_set(env: Env, args: &[napi_value; 5]) -> Result<napi_value, Error> {
    let mut stack = [0u8; KEY_STACK];
    let key = key_id_arg(env, args[0], &mut stack)?;
    let c = credits_args(env, &args[1..])?;
    credits::set(key, &c)?;
    Ok(env.undefined()?)
}

/// creditsDelete(keyId): boolean — inside a transaction: the key becomes unlimited (true if
/// it had a credits record). This node's lease of them goes too.
pub fn credits_delete(env: Env, args: &[napi_value; 1]) -> Result<napi_value, Error> {
    let mut stack = [0u8; KEY_STACK];
    let key_id = credits::checked_key_id(key_id_arg(env, args[0], &mut stack)?)?;
    store::note_written(CREDITS_WRITES, key_id, any_before, None)?;
    store::note_records_change()?;
    counterlog::remove(&credits::lease_key(key_id))?;
    Ok(env.boolean(counterlog::remove(&credits::record_key(key_id))?)?)
}

/// creditsApply(keyId, remaining, refillAmount, refillDay, lastRefillAtMs, epoch): void —
/// inside a transaction: a change of the cluster's balance reached this node (the replica
/// applies it from the change log). A later epoch voids this node's lease of the one before.
pub fn credits_apply(env: Env, args: &[napi_value; 6]) -> Result<napi_value, Error> {
    let mut stack = [0u8; KEY_STACK];
    let key_id = credits::checked_key_id(key_id_arg(env, args[0], &mut stack)?)?;
    let epoch = epoch_arg(env, args[5])?;
    let c = Credits { epoch, ..credits_args(env, &args[1..5])? };
    store::note_records_change()?;
    counterlog::put(&credits::record_key(key_id), &c.encode())?;
    let held = store::view(|v| lease(v, key_id, epoch))?;
    if let Some(l) = held {
        counterlog::put(&credits::lease_key(key_id), &l.encode())?;
    }
    Ok(env.undefined()?)
}

fn epoch_arg(env: Env, value: napi_value) -> Result<u32, Error> {
    u32::try_from(int_arg(env, value, "epoch")?).map_err(|_| bad("epoch out of range"))
}

/// leaseGrant(keyId, epoch, granted, balance, exhausted): number — inside a transaction:
/// PostgreSQL granted this node `granted` in all under `epoch` (a total: one already counted
/// adds nothing) and left the cluster's balance at `balance`, which this node now knows;
/// `exhausted`: it refused a spend with the balance at 0 and no lease out (verifications the
/// lease cannot pay for are then refused here, until a change of the balance arrives).
/// Returns what the lease holds now. A grant of an epoch the balance has left is void;
/// nothing is done for a key without credits (made unlimited meanwhile), and −1 returned.
pub fn lease_grant(env: Env, args: &[napi_value; 5]) -> Result<napi_value, Error> {
    let mut stack = [0u8; KEY_STACK];
    let key_id = credits::checked_key_id(key_id_arg(env, args[0], &mut stack)?)?;
    let epoch = epoch_arg(env, args[1])?;
    let granted = int_arg(env, args[2], "granted")?;
    let balance = int_arg(env, args[3], "balance")?;
    let exhausted = bool_arg(env, args[4], "exhausted")?;
    if granted < 0 || balance < 0 || (exhausted && balance > 0) {
        return Err(bad("granted and balance must be ≥ 0"));
    }
    let Some(c) = store::view(|v| stored(v, key_id))? else { return Ok(env.double(-1.0)?) };
    if epoch < c.epoch {
        let held = store::view(|v| lease(v, key_id, c.epoch))?;
        return Ok(env.double(held.map_or(0, |l| l.remaining) as f64)?);
    }
    // The grant may come before the change that started its epoch: the balance moves on to it.
    let c = Credits { remaining: balance, epoch, exhausted, ..c };
    counterlog::put(&credits::record_key(key_id), &c.encode())?;
    let held = store::view(|v| lease(v, key_id, epoch))?.unwrap_or_default().with_grant(epoch, granted);
    counterlog::put(&credits::lease_key(key_id), &held.encode())?;
    Ok(env.double(held.remaining as f64)?)
}

/// leaseGiveBack(keyId): [epoch, returned, amount, granted] | undefined — inside a
/// transaction: takes everything left of this node's lease (`amount`) for PostgreSQL, and
/// returns the lease's totals to report: all `returned`, and all `granted` (of which the node
/// holds nothing now). undefined: no lease (or one voided by a later epoch).
pub fn lease_give_back(env: Env, args: &[napi_value; 1]) -> Result<napi_value, Error> {
    let mut stack = [0u8; KEY_STACK];
    let key_id = credits::checked_key_id(key_id_arg(env, args[0], &mut stack)?)?;
    let held = current_lease(key_id)?;
    let Some(l) = held.filter(|l| l.granted != 0 || l.returned != 0 || l.remaining != 0) else { return Ok(env.undefined()?) };
    let back = l.given_back();
    if back != l {
        counterlog::put(&credits::lease_key(key_id), &back.encode())?;
    }
    numbers(env, &[i64::from(l.epoch), back.returned, l.remaining, l.granted])
}

/// leaseGet(keyId): [remaining, granted, returned, epoch] | undefined — this node's lease.
pub fn lease_get(env: Env, args: &[napi_value; 1]) -> Result<napi_value, Error> {
    let mut stack = [0u8; KEY_STACK];
    let key_id = credits::checked_key_id(key_id_arg(env, args[0], &mut stack)?)?;
    let held = current_lease(key_id)?;
    match held {
        Some(l) => numbers(env, &[l.remaining, l.granted, l.returned, i64::from(l.epoch)]),
        None => Ok(env.undefined()?),
    }
}

/// leasesLow(): string[] — the keys whose lease went low since the last call (credits.rs
/// `take_low`), for the next lease to be asked for before this one runs out.
pub fn leases_low(env: Env, _: &[napi_value; 0]) -> Result<napi_value, Error> {
    let low = credits::take_low();
    let out = env.array(low.len())?;
    for (i, key_id) in low.iter().enumerate() {
        env.set_element(out, i as u32, env.string_from_utf8(key_id)?)?;
    }
    Ok(out)
}
