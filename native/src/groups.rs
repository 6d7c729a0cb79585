//! Write groups (the `writeGroups` export): the checks and writes of many records in one
//! call, for an edit that writes hundreds of them in one transaction (keys.migrateKeys,
//! src/edits/importKeys.ts). Made one call per check or put, such an edit spent more on the
//! calls than on the writes, and held the writer, which the hot calls wait for, that long.
//!
//! A plan is a sequence of groups, run in order inside the caller's write transaction. A
//! group's checks come before its writes (a check after one of its writes is refused), and it
//! stops at its first failed check, having written nothing. The outcome of each group, one
//! byte: `WRITTEN`, `PRESENT` (an `ABSENT` found its key), `HELD_OTHERWISE` (a `HOLDS` found
//! the key holding another value, or absent with nothing to create it).
//!
//! Layout (integers little-endian; `key`: u16 length then the bytes; `value`: u32 length then
//! the bytes; `table`: a table's id, store/table.rs):
//!
//! ```text
//! group := u16 op count, op*
//! op    := 1 ABSENT  table key                 the key is not in the table
//!        | 2 HOLDS   table key value u16 then  the key holds `value`: the next `then` ops are
//!                                              skipped; it is absent: they run (they create
//!                                              it; then = 0: the check fails)
//!        | 3 PUT     table key value
//!        | 4 CREDITS key f64 f64 f64 f64      the key id's balance set (credits.rs `set`):
//!                                              remaining, refill amount, refill day, last
//!                                              refill (ms)
//! ```

use crate::credits::{self, Credits};
use crate::store::{self, StoreError, Table};

pub const WRITTEN: u8 = 0;
pub const PRESENT: u8 = 1;
pub const HELD_OTHERWISE: u8 = 2;

const ABSENT: u8 = 1;
const HOLDS: u8 = 2;
const PUT: u8 = 3;
const CREDITS: u8 = 4;

enum Op<'a> {
    Absent(Table, &'a [u8]),
    Holds(Table, &'a [u8], &'a [u8], u16),
    Put(Table, &'a [u8], &'a [u8]),
    Credits(&'a [u8], Credits),
}

struct Reader<'a> {
    bytes: &'a [u8],
}

fn malformed(what: &str) -> StoreError {
    StoreError::BadArgument(format!("write plan: {what}"))
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], StoreError> {
        if self.bytes.len() < n {
            return Err(malformed("ends inside an op"));
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(head)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], StoreError> {
        Ok(self.take(N)?.try_into().expect("taken N bytes"))
    }

    fn u16(&mut self) -> Result<u16, StoreError> {
        Ok(u16::from_le_bytes(self.array()?))
    }

    fn table(&mut self) -> Result<Table, StoreError> {
        let [id] = self.array()?;
        Table::from_id(id).ok_or_else(|| malformed(&format!("no table has id {id}")))
    }

    fn key(&mut self) -> Result<&'a [u8], StoreError> {
        let n = self.u16()?;
        self.take(usize::from(n))
    }

    fn value(&mut self) -> Result<&'a [u8], StoreError> {
        let n = u32::from_le_bytes(self.array()?);
        self.take(n as usize)
    }

    fn integer(&mut self) -> Result<i64, StoreError> {
        let x = f64::from_le_bytes(self.array()?);
        if x.fract() != 0.0 || x.abs() > 9_007_199_254_740_991.0 {
            return Err(malformed("a credits field is not a safe integer"));
        }
        Ok(x as i64)
    }

    fn op(&mut self) -> Result<Op<'a>, StoreError> {
        let [code] = self.array()?;
        Ok(match code {
            ABSENT => Op::Absent(self.table()?, self.key()?),
            HOLDS => Op::Holds(self.table()?, self.key()?, self.value()?, self.u16()?),
            PUT => Op::Put(self.table()?, self.key()?, self.value()?),
            CREDITS => {
                let key = self.key()?;
                let [remaining, amount, day, last] = [self.integer()?, self.integer()?, self.integer()?, self.integer()?];
                Op::Credits(key, Credits::new(remaining, amount, day, last).ok_or_else(|| malformed("credits out of range"))?)
            }
            other => return Err(malformed(&format!("unknown op {other}"))),
        })
    }
}

/// Runs `plan` (inside the caller's write transaction): the outcome of each group. A
/// malformed plan is an error, possibly after some groups were written: the caller's
/// transaction, aborted, takes them back.
pub fn run(plan: &[u8]) -> Result<Vec<u8>, StoreError> {
    let mut reader = Reader { bytes: plan };
    let mut outcomes = Vec::new();
    while !reader.bytes.is_empty() {
        let count = reader.u16()?;
        let mut outcome = WRITTEN;
        let mut wrote = false;
        let mut skip = 0u16;
        for i in 0..count {
            // Every op is read, also those skipped or after a failed check: the next group starts after them.
            let op = reader.op()?;
            if let Op::Holds(.., then) = op {
                if then > count - i - 1 {
                    return Err(malformed("a HOLDS whose ops run past its group"));
                }
            }
            if outcome != WRITTEN {
                continue;
            }
            if skip > 0 {
                skip -= 1;
                continue;
            }
            let check = matches!(op, Op::Absent(..) | Op::Holds(..));
            if check && wrote {
                return Err(malformed("a check after a write of its group"));
            }
            match op {
                Op::Absent(table, key) => {
                    if store::get(table, key, |v| v.is_some())? {
                        outcome = PRESENT;
                    }
                }
                Op::Holds(table, key, value, then) => match store::get(table, key, |v| v.map(|v| v == value))? {
                    Some(true) => skip = then,
                    None if then > 0 => {}
                    _ => outcome = HELD_OTHERWISE,
                },
                Op::Put(table, key, value) => {
                    store::put(table, key, value)?;
                    wrote = true;
                }
                Op::Credits(key, c) => {
                    credits::set(key, &c)?;
                    wrote = true;
                }
            }
        }
        outcomes.push(outcome);
    }
    Ok(outcomes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::tests::Fixture;

    /// A plan as src/store/writeGroups.ts writes it.
    #[derive(Default)]
    struct Plan(Vec<u8>);

    impl Plan {
        fn group(mut self, ops: &[Vec<u8>]) -> Plan {
            self.0.extend_from_slice(&(ops.len() as u16).to_le_bytes());
            ops.iter().for_each(|op| self.0.extend_from_slice(op));
            self
        }
    }

    fn key(k: &[u8]) -> Vec<u8> {
        [&(k.len() as u16).to_le_bytes()[..], k].concat()
    }

    fn value(v: &[u8]) -> Vec<u8> {
        [&(v.len() as u32).to_le_bytes()[..], v].concat()
    }

    fn absent(t: Table, k: &[u8]) -> Vec<u8> {
        [vec![ABSENT, t.id()], key(k)].concat()
    }

    fn holds(t: Table, k: &[u8], v: &[u8], then: u16) -> Vec<u8> {
        [vec![HOLDS, t.id()], key(k), value(v), then.to_le_bytes().to_vec()].concat()
    }

    fn put(t: Table, k: &[u8], v: &[u8]) -> Vec<u8> {
        [vec![PUT, t.id()], key(k), value(v)].concat()
    }

    fn credits_op(k: &[u8], fields: [f64; 4]) -> Vec<u8> {
        [vec![CREDITS], key(k), fields.iter().flat_map(|f| f.to_le_bytes()).collect()].concat()
    }

    fn stored(t: Table, k: &[u8]) -> Option<Vec<u8>> {
        store::get(t, k, |v| v.map(<[u8]>::to_vec)).unwrap()
    }

    #[test]
    fn groups_check_then_write_and_stop_at_their_first_failed_check() {
        let _store = Fixture::new("groups", 0);
        store::transaction(|| store::put(Table::INDEXES, b"taken", b"")).unwrap();
        store::transaction(|| store::put(Table::INDEXES, b"ext/a", b"id_a")).unwrap();
        let plan = Plan::default()
            // written: absent, and the identity as planned
            .group(&[absent(Table::KEY_RECORDS, b"h1"), holds(Table::INDEXES, b"ext/a", b"id_a", 1), put(Table::INDEXES, b"ext/a", b"never"), put(Table::KEY_RECORDS, b"h1", b"r1"), credits_op(b"key_1", [5.0, -1.0, 0.0, 7.0])])
            // present: nothing of it written
            .group(&[absent(Table::INDEXES, b"taken"), put(Table::KEY_RECORDS, b"h2", b"r2")])
            // held otherwise
            .group(&[holds(Table::INDEXES, b"ext/a", b"id_other", 1), put(Table::INDEXES, b"ext/a", b"id_other"), put(Table::KEY_RECORDS, b"h3", b"r3")])
            // absent: created by the ops it runs
            .group(&[holds(Table::INDEXES, b"ext/b", b"id_b", 1), put(Table::INDEXES, b"ext/b", b"id_b"), put(Table::KEY_RECORDS, b"h4", b"r4")])
            // absent with nothing to create it
            .group(&[holds(Table::INDEXES, b"ext/c", b"id_c", 0), put(Table::KEY_RECORDS, b"h5", b"r5")]);
        let outcomes = store::transaction(|| run(&plan.0)).unwrap();
        assert_eq!(outcomes, [WRITTEN, PRESENT, HELD_OTHERWISE, WRITTEN, HELD_OTHERWISE]);
        assert_eq!(stored(Table::KEY_RECORDS, b"h1").as_deref(), Some(&b"r1"[..]));
        assert_eq!(stored(Table::INDEXES, b"ext/a").as_deref(), Some(&b"id_a"[..]), "the skipped op did not run");
        for absent in [&b"h2"[..], b"h3", b"h5"] {
            assert_eq!(stored(Table::KEY_RECORDS, absent), None);
        }
        assert_eq!(stored(Table::INDEXES, b"ext/b").as_deref(), Some(&b"id_b"[..]));
        assert_eq!(stored(Table::KEY_RECORDS, b"h4").as_deref(), Some(&b"r4"[..]));
        let balance = store::view(|v| crate::counterlog::get(v, &credits::record_key(b"key_1"))).unwrap();
        assert_eq!(balance.and_then(|b| Credits::decode(&b)), Credits::new(5, -1, 0, 7));
    }

    #[test]
    fn malformed_plans_are_refused() {
        let _store = Fixture::new("groups-malformed", 0);
        let cases: [(&str, Vec<u8>); 6] = [
            ("ends inside", Plan::default().group(&[put(Table::KEY_RECORDS, b"h", b"r")]).0[..9].to_vec()),
            ("no table", Plan::default().group(&[[vec![PUT, 200], key(b"h"), value(b"r")].concat()]).0),
            ("unknown op", Plan::default().group(&[vec![9]]).0),
            ("check after a write", Plan::default().group(&[put(Table::KEY_RECORDS, b"h", b"r"), absent(Table::KEY_RECORDS, b"x")]).0),
            ("past its group", Plan::default().group(&[holds(Table::INDEXES, b"e", b"v", 2), put(Table::INDEXES, b"e", b"v")]).0),
            ("out of range", Plan::default().group(&[credits_op(b"k", [-1.0, -1.0, 0.0, 0.0])]).0),
        ];
        for (what, plan) in cases {
            let err = store::transaction(|| run(&plan)).err().unwrap_or_else(|| panic!("{what}: accepted"));
            assert!(matches!(err, StoreError::BadArgument(_)), "{what}: {err}");
        }
        assert_eq!(stored(Table::KEY_RECORDS, b"h"), None, "the aborted transaction wrote nothing");
    }
}
