//! The analytics worker's reading of the buffered events (events.rs's JSON lines) into the
//! rows DuckDB stores (src/analytics/database.ts): one pass over each line here, taking only
//! the fields the tables keep, where DuckDB parsing each line's whole body and reply as JSON
//! (json_transform) cost 15–20 µs of CPU per event, CPU the serving threads share.
//!
//! Out: for each table, one text per column (`Columns`), its rows' values separated by line
//! feeds, so that DuckDB reads a batch by splitting each column once and zipping them (no
//! list per row to build and index). The columns, in this order (database.ts names them):
//!
//! - verifications: request_id, time, dim, external_id, key_id, tags, spent_credits;
//! - rate-limit decisions (a multiLimit's limits one row each): request_id, time, dim,
//!   identifier, passed (1 or 0), latency (µs), limit, remaining, reset_at, tokens.
//!
//! `dim` is the id of the row's dim: the tuple of the fields a batch holds few of (a
//! verification's workspace_id, key_space_id and outcome; a limit's workspace_id,
//! namespace_id, namespace_name and override_id), which the database stores once (schema.ts,
//! "dims") rather than as text in every row: a long text per row cost DuckDB about 0.1 µs of
//! CPU in its write-ahead log alone (bench/HISTORY.md, 2026-11-30). The ids are the
//! database's (event_dims.rs); the dims a batch numbered are listed (`Dims::added`).
//!
//! Text values are escaped so that none holds a line feed, a tab, a unit separator (31) or a
//! NUL: those and `%` become `%` and two hex digits (`%0A`, `%09`, `%1F`, `%00`, `%25`); a
//! column's bit in `escaped` says whether any of its values was (DuckDB undoes escapes only
//! there). `tags` is empty for none, else each tag preceded by a unit separator. The fields
//! of a dim are not escaped (they reach JavaScript as strings of their own). A line that does
//! not read as an event (no outcome, not JSON) gives no row and is counted.

use std::borrow::Cow;

use crate::event_dims::{self, Known};
use crate::events::{LIMIT, MULTI_LIMIT, VERIFY};
use crate::ffi::os;
use crate::json;
use crate::json_read::{boolean, decode, elements, int, last_member, member, members, plain_int};

/// The columns of the verifications table, and of the rate-limit one.
pub const VERIFICATION_COLUMNS: usize = 7;
pub const RATELIMIT_COLUMNS: usize = 10;
const MAX_COLUMNS: usize = RATELIMIT_COLUMNS;
/// The column that holds a row's dim (the module comment lists each table's dim fields).
const DIM: usize = 2;

/// A table's dims while a batch is read: the database's (`known`, event_dims.rs, lent to the
/// read), the row's as far as read, and those the batch numbered (`added`), which the database
/// stores with its rows.
#[derive(Debug, Default, PartialEq)]
pub struct Dims {
    known: Known,
    /// The row being read's dim, as far as read: its fields as `Known` keys them.
    current: Vec<u8>,
    /// The last row's dim and its id: the next row's, without a lookup, when the same (a
    /// batch is mostly one workspace's, one API's or namespace's).
    last: Vec<u8>,
    last_id: Option<u32>,
    added: Vec<(u32, Vec<u8>)>,
}

impl Dims {
    fn clear(&mut self) {
        self.current.clear();
        self.last_id = None;
        self.added.clear();
    }

    /// A field of the row's dim (read_line's order: each row's fields one after another).
    fn field(&mut self, s: &[u8]) {
        event_dims::push_field(&mut self.current, s);
    }

    /// The id of the row's dim (`current`, then emptied).
    fn end(&mut self) -> u32 {
        let id = match self.last_id {
            Some(id) if self.last == self.current => id,
            _ => {
                let (id, new) = self.known.id(&self.current);
                if new {
                    self.added.push((id, self.current.clone()));
                }
                self.last.clear();
                self.last.extend_from_slice(&self.current);
                self.last_id = Some(id);
                id
            }
        };
        self.current.clear();
        id
    }

    /// The dims the batch numbered: each one's id and fields.
    pub fn added(&self) -> impl Iterator<Item = (u32, impl Iterator<Item = &[u8]>)> {
        self.added.iter().map(|(id, key)| (*id, event_dims::fields(key)))
    }
}

/// One table's rows, as one text per column.
#[derive(Debug, PartialEq)]
pub struct Columns {
    /// Each column's values, each followed by a line feed (`separated` drops the last).
    texts: Vec<Vec<u8>>,
    pub rows: u32,
    /// Bit i: some value of column i was escaped.
    pub escaped: u32,
    pub dims: Dims,
}

/// Where a table's columns stood before a line, to take back a line that does not read.
type Mark = ([usize; MAX_COLUMNS], u32);

impl Columns {
    fn new(columns: usize) -> Self {
        Columns { texts: vec![Vec::new(); columns], rows: 0, escaped: 0, dims: Dims::default() }
    }

    fn mark(&self) -> Mark {
        let mut lens = [0; MAX_COLUMNS];
        for (len, text) in lens.iter_mut().zip(&self.texts) {
            *len = text.len();
        }
        (lens, self.rows)
    }

    fn back_to(&mut self, (lens, rows): Mark) {
        for (text, len) in self.texts.iter_mut().zip(lens) {
            text.truncate(len);
        }
        self.rows = rows;
        // A dim already numbered stays (unused); one half read goes.
        self.dims.current.clear();
    }

    pub fn columns(&self) -> usize {
        self.texts.len()
    }

    /// Column `i`'s values, separated by line feeds.
    pub fn separated(&self, i: usize) -> &[u8] {
        let text = &self.texts[i];
        &text[..text.len().saturating_sub(1)]
    }

    /// A text value of column `i`.
    fn text(&mut self, i: usize, s: &[u8]) {
        if text(&mut self.texts[i], s) {
            self.escaped |= 1 << i;
        }
        self.texts[i].push(b'\n');
    }

    fn int(&mut self, i: usize, n: i64) {
        json::int(&mut self.texts[i], n);
        self.texts[i].push(b'\n');
    }

    /// An integer value of column `i` from its JSON text `v` (`default` when there is none):
    /// copied as written when it is a plain integer (most are), else read as `int` reads it.
    fn int_of(&mut self, i: usize, v: Option<&[u8]>, default: i64) {
        match v {
            Some(v) if plain_int(v).is_some() => {
                self.texts[i].extend_from_slice(v);
                self.texts[i].push(b'\n');
            }
            _ => self.int(i, v.and_then(int).unwrap_or(default)),
        }
    }

    /// Empties every column, keeping what each has allocated (up to `MAX_KEPT` bytes).
    fn clear(&mut self) {
        for text in &mut self.texts {
            text.clear();
            text.shrink_to(MAX_KEPT);
        }
        self.rows = 0;
        self.escaped = 0;
        self.dims.clear();
    }

    /// The row's dim is read: its id into column DIM.
    fn end_dim(&mut self) {
        let n = self.dims.end();
        self.int(DIM, i64::from(n));
    }

    /// The tags column's value: each tag preceded by a unit separator.
    fn tags(&mut self, i: usize, tags: &[Cow<'_, [u8]>]) {
        for t in tags {
            self.texts[i].push(31);
            if text(&mut self.texts[i], t) {
                self.escaped |= 1 << i;
            }
        }
        self.texts[i].push(b'\n');
    }
}

/// The rows of a batch of event lines.
#[derive(Debug, PartialEq)]
pub struct Rows {
    pub verifications: Columns,
    pub ratelimits: Columns,
    /// Lines that gave no row.
    pub unread: u32,
    /// The earliest `time` of a row (i64::MAX when there is none).
    pub min_time: i64,
}

/// What a column keeps allocated from one batch to the next (`recycle`); a burst's batch gives back the rest.
const MAX_KEPT: usize = 1 << 20;

thread_local! {
    /// The columns of the last batch read on this thread, given back (`recycle`) for the next to fill:
    /// growing a batch's columns from nothing each time was a sixth of its reading (the pages
    /// faulted in, and the copies of each growth).
    static SPARE: std::cell::Cell<Option<Rows>> = const { std::cell::Cell::new(None) };
}

/// The rows of `lines`, their dims numbered as `known` (the database's: verifications, rate
/// limits) has them, new ones added to it.
pub fn rows(lines: &[u8], known: &mut [Known; 2]) -> Rows {
    let mut out = match SPARE.take() {
        Some(mut spare) => {
            spare.verifications.clear();
            spare.ratelimits.clear();
            Rows { unread: 0, min_time: i64::MAX, ..spare }
        }
        None => Rows { verifications: Columns::new(VERIFICATION_COLUMNS), ratelimits: Columns::new(RATELIMIT_COLUMNS), unread: 0, min_time: i64::MAX },
    };
    let [verifications, ratelimits] = known;
    for (lent, table) in [(verifications, &mut out.verifications), (ratelimits, &mut out.ratelimits)] {
        lent.start_batch();
        std::mem::swap(lent, &mut table.dims.known);
    }
    let mut rest = lines;
    while !rest.is_empty() {
        // memchr: a byte at a time, finding the lines was an eighth of a batch's reading.
        let end = os::memchr(rest, b'\n').unwrap_or(rest.len());
        let line = &rest[..end];
        rest = &rest[(end + 1).min(rest.len())..];
        if !line.is_empty() && read_line(line, &mut out).is_none() {
            out.unread += 1;
        }
    }
    let [verifications, ratelimits] = known;
    std::mem::swap(verifications, &mut out.verifications.dims.known);
    std::mem::swap(ratelimits, &mut out.ratelimits.dims.known);
    out
}

/// Gives `rows` back once read, for the next batch on this thread to fill (`rows`).
pub fn recycle(rows: Rows) {
    SPARE.set(Some(rows));
}

/// The fields every event line has (events.rs), as raw JSON values.
#[derive(Default)]
struct Head<'a> {
    kind: Option<i64>,
    time: Option<&'a [u8]>,
    latency: Option<&'a [u8]>,
    workspace: &'a [u8],
    request: &'a [u8],
    subject: &'a [u8],
    body: &'a [u8],
}

/// Appends the rows of one line; a line that does not read leaves nothing behind.
fn read_line(line: &[u8], out: &mut Rows) -> Option<()> {
    let marks = (out.verifications.mark(), out.ratelimits.mark());
    // Cut where events.rs puts the reply and its data; read member by member when that fails.
    for cut in [true, false] {
        if let Some(time) = line_rows(line, cut, out) {
            out.min_time = out.min_time.min(time);
            return Some(());
        }
        out.verifications.back_to(marks.0);
        out.ratelimits.back_to(marks.1);
    }
    None
}

/// Writes the rows of one line (partly, when it does not read: the caller takes them back);
/// its time.
fn line_rows(line: &[u8], cut: bool, out: &mut Rows) -> Option<i64> {
    let mut h = Head::default();
    let mut head = |name: &[u8], v| match name {
        b"k" => h.kind = int(v),
        b"t" => h.time = Some(v),
        b"l" => h.latency = Some(v),
        b"w" => h.workspace = v,
        b"r" => h.request = v,
        b"s" => h.subject = v,
        b"b" => h.body = v,
        _ => {}
    };
    let data = if cut {
        // As events.rs writes them: the reply last in the line, its data last in the reply.
        let reply = last_member(line, b"p", &mut head)?;
        last_member(reply, b"data", |_, _| {})?
    } else {
        let mut reply = None;
        members(line, |name, v| match name {
            b"p" => reply = Some(v),
            _ => head(name, v),
        })?;
        member(reply?, b"data")?
    };
    let time = int(h.time?)?;
    match u8::try_from(h.kind?).ok()? {
        VERIFY => verification(&h, time, data, &mut out.verifications)?,
        LIMIT => limit_row(&h, time, &decode(h.subject)?, h.body, data, &mut out.ratelimits)?,
        MULTI_LIMIT => {
            let subject = decode(h.subject)?;
            let mut namespaces = subject.split(|&b| b == b'\n');
            let mut limits = Vec::new();
            elements(member(data, b"limits")?, |v| limits.push(v))?;
            let (mut i, mut ok) = (0, true);
            elements(h.body, |item| {
                let namespace = namespaces.next().unwrap_or_default();
                let result = limits.get(i).copied().unwrap_or(b"{}");
                i += 1;
                ok &= limit_row(&h, time, namespace, item, result, &mut out.ratelimits).is_some();
            })?;
            ok.then_some(())?;
        }
        _ => return None,
    }
    Some(time)
}

/// One verification's row; none without an outcome.
fn verification(h: &Head<'_>, time: i64, data: &[u8], out: &mut Columns) -> Option<()> {
    let (mut tags, mut cost) = (None, None);
    members(h.body, |name, v| match name {
        b"tags" => tags = Some(v),
        b"credits" => cost = member(v, b"cost").and_then(int),
        _ => {}
    })?;
    let (mut code, mut key_id, mut credits, mut external_id) = (None, None, false, None);
    members(data, |name, v| match name {
        b"code" => code = Some(v),
        b"keyId" => key_id = Some(v),
        b"credits" => credits = v != b"null",
        b"identity" => external_id = member(v, b"externalId"),
        _ => {}
    })?;
    let code = decode(code?)?;
    let mut tag_values = Vec::new();
    if let Some(tags) = tags {
        let mut ok = true;
        elements(tags, |t| match decode(t) {
            Some(t) => tag_values.push(t),
            None => ok = false,
        })?;
        ok.then_some(())?;
    }
    head_fields(h, time, out)?;
    out.dims.field(&decode(h.subject)?);
    out.dims.field(&code);
    out.end_dim();
    for (i, field) in [(3, external_id), (4, key_id)] {
        out.text(i, &decode(field.unwrap_or(b"\"\""))?);
    }
    out.tags(5, &tag_values);
    let spent = if &*code == b"VALID" && credits { cost.unwrap_or(1) } else { 0 };
    out.int(6, spent);
    out.rows += 1;
    Some(())
}

/// One limit's row: `request` is its part of the body, `result` its part of the reply.
/// Like `verification`, it may leave part of a row behind when it fails (read_line takes it back).
fn limit_row(h: &Head<'_>, time: i64, namespace_id: &[u8], request: &[u8], result: &[u8], out: &mut Columns) -> Option<()> {
    let (mut name, mut identifier, mut cost) = (None, None, None);
    members(request, |field, v| match field {
        b"namespace" => name = Some(v),
        b"identifier" => identifier = Some(v),
        b"cost" => cost = Some(v),
        _ => {}
    })?;
    let (mut passed, mut limit, mut remaining, mut reset, mut override_id) = (None, None, None, None, None);
    members(result, |field, v| match field {
        b"success" | b"passed" => passed = boolean(v),
        b"limit" => limit = Some(v),
        b"remaining" => remaining = Some(v),
        b"reset" => reset = Some(v),
        b"overrideId" => override_id = Some(v),
        _ => {}
    })?;
    head_fields(h, time, out)?;
    out.dims.field(namespace_id);
    out.dims.field(&decode(name.unwrap_or(b"\"\""))?);
    out.dims.field(&decode(override_id.unwrap_or(b"\"\""))?);
    out.end_dim();
    out.text(3, &decode(identifier.unwrap_or(b"\"\""))?);
    out.int(4, i64::from(passed.unwrap_or(false)));
    out.int_of(5, h.latency, 0);
    for (i, v) in [(6, limit), (7, remaining), (8, reset)] {
        out.int_of(i, v, 0);
    }
    out.int_of(9, cost, 1);
    out.rows += 1;
    Some(())
}

/// request_id and time, the first two columns of both tables, and workspace_id, the first field of their dims.
fn head_fields(h: &Head<'_>, time: i64, out: &mut Columns) -> Option<()> {
    out.text(0, &decode(h.request)?);
    out.int_of(1, h.time, time);
    out.dims.field(&decode(h.workspace)?);
    Some(())
}

/// Appends `s` escaped as the module comment says; whether anything was escaped.
fn text(out: &mut Vec<u8>, s: &[u8]) -> bool {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    if !s.iter().any(|&b| matches!(b, b'\t' | b'\n' | 31 | 0 | b'%')) {
        out.extend_from_slice(s);
        return false;
    }
    for &b in s {
        if matches!(b, b'\t' | b'\n' | 31 | 0 | b'%') {
            out.extend_from_slice(&[b'%', HEX[usize::from(b >> 4)], HEX[usize::from(b & 15)]]);
        } else {
            out.push(b);
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rows of `lines` read for a database that knows no dims yet.
    fn rows(lines: &[u8]) -> Rows {
        super::rows(lines, &mut [Known::default(), Known::default()])
    }

    fn text_of(v: &[u8]) -> String {
        String::from_utf8(v.to_vec()).unwrap()
    }

    /// The rows of `c`, each its values joined by tabs and followed by a line feed; its dim as the dim's fields joined by `|`.
    fn as_rows(c: &Columns) -> String {
        let mut columns: Vec<Vec<String>> = (0..c.texts.len()).map(|i| text_of(c.separated(i)).split('\n').map(str::to_owned).collect()).collect();
        let dims: std::collections::HashMap<String, String> = c.dims.added().map(|(id, f)| (id.to_string(), f.map(text_of).collect::<Vec<_>>().join("|"))).collect();
        for id in &mut columns[DIM] {
            *id = dims.get(id.as_str()).cloned().unwrap_or_else(|| format!("#{id}"));
        }
        (0..c.rows as usize).map(|r| columns.iter().map(|col| col[r].clone()).collect::<Vec<_>>().join("\t") + "\n").collect()
    }

    #[test]
    fn a_verification_becomes_one_row_with_its_identity_tags_and_spent_credits() {
        let line = br#"{"k":1,"t":1700000000000,"l":9,"w":"ws_1","r":"req_1","s":"api_1","b":{"key":"sk_x","tags":["path=/a","tab\there"],"credits":{"cost":3}},"p":{"meta":{"requestId":"req_1"},"data":{"valid":true,"code":"VALID","keyId":"key_1","credits":97,"meta":{"a":[1,{"b":"}"}]},"identity":{"id":"id_1","externalId":"cust_%1"}}}}"#;
        let r = rows(line);
        assert_eq!((r.unread, r.min_time, r.verifications.rows), (0, 1700000000000, 1));
        assert_eq!(as_rows(&r.verifications), "req_1\t1700000000000\tws_1|api_1|VALID\tcust_%251\tkey_1\t\u{1f}path=/a\u{1f}tab%09here\t3\n");
        assert_eq!(r.verifications.escaped, 1 << 3 | 1 << 5, "external_id and tags held escapes");
        assert_eq!(text_of(r.verifications.separated(0)), "req_1", "values are separated, not terminated");
        assert!(r.ratelimits.rows == 0);
    }

    #[test]
    fn credits_are_spent_only_by_a_valid_answer_of_a_key_with_credits() {
        let line = |code: &str, credits: &str| format!(r#"{{"k":1,"t":1,"l":0,"w":"w","r":"r","s":"","b":{{"key":"k"}},"p":{{"data":{{"code":"{code}"{credits}}}}}}}"#);
        assert!(as_rows(&rows(line("VALID", r#","credits":5"#).as_bytes()).verifications).ends_with("|VALID\t\t\t\t1\n"));
        assert!(as_rows(&rows(line("VALID", r#","credits":null"#).as_bytes()).verifications).ends_with("\t0\n"));
        assert!(as_rows(&rows(line("USAGE_EXCEEDED", r#","credits":0"#).as_bytes()).verifications).ends_with("\t0\n"));
        assert_eq!(as_rows(&rows(line("NOT_FOUND", "").as_bytes()).verifications), "r\t1\tw||NOT_FOUND\t\t\t\t0\n");
    }

    #[test]
    fn a_limit_and_each_limit_of_a_multi_limit_become_rows() {
        let limit = br#"{"k":2,"t":5,"l":1500,"w":"w","r":"r1","s":"ns_1","b":{"namespace":"api","identifier":"u\u00e9","limit":10,"duration":1000,"cost":2},"p":{"data":{"success":true,"limit":10,"remaining":8,"reset":1005,"overrideId":"ovr_1"}}}"#;
        let multi = br#"{"k":3,"t":6,"l":7,"w":"w","r":"r2","s":"ns_1\nns_2","b":[{"namespace":"a","identifier":"x","limit":1,"duration":1000},{"namespace":"b","identifier":"y","limit":1,"duration":1000}],"p":{"data":{"passed":false,"limits":[{"passed":true,"limit":1,"remaining":0,"reset":9},{"passed":false,"limit":1,"remaining":0,"reset":9}]}}}"#;
        let r = rows(&[&limit[..], b"\n", &multi[..], b"\n"].concat());
        assert_eq!(r.unread, 0);
        assert_eq!(
            as_rows(&r.ratelimits),
            "r1\t5\tw|ns_1|api|ovr_1\tu\u{e9}\t1\t1500\t10\t8\t1005\t2\nr2\t6\tw|ns_1|a|\tx\t1\t7\t1\t0\t9\t1\nr2\t6\tw|ns_2|b|\ty\t0\t7\t1\t0\t9\t1\n"
        );
    }

    #[test]
    fn each_dim_is_numbered_once_by_the_database_and_a_batch_lists_those_it_numbered() {
        let limit = |ns: &str, name: &str| format!(r#"{{"k":2,"t":5,"l":1,"w":"w","r":"r","s":"{ns}","b":{{"namespace":"{name}","identifier":"i"}},"p":{{"data":{{"success":true}}}}}}"#);
        let mut known = [Known::default(), Known::starting_at(10)];
        let lines = [limit("n1", "a"), limit("n2", "b"), limit("n1", "a"), limit("n1", r"a\u0000"), limit("n2", "b")].join("\n");
        let r = super::rows(lines.as_bytes(), &mut known);
        assert_eq!(text_of(r.ratelimits.separated(DIM)), "10\n11\n10\n12\n11");
        let added: Vec<(u32, Vec<String>)> = r.ratelimits.dims.added().map(|(id, f)| (id, f.map(text_of).collect())).collect();
        assert_eq!(added, [(10, vec!["w", "n1", "a", ""]), (11, vec!["w", "n2", "b", ""]), (12, vec!["w", "n1", "a\0", ""])].map(|(id, f)| (id, f.into_iter().map(str::to_owned).collect())), "fields are raw, not escaped, and may hold any byte");
        recycle(r);
        let again = super::rows([limit("n2", "b"), limit("n3", "c")].join("\n").as_bytes(), &mut known);
        assert_eq!(text_of(again.ratelimits.separated(DIM)), "11\n13", "the database's ids, across batches");
        assert_eq!(again.ratelimits.dims.added().map(|(id, _)| id).collect::<Vec<_>>(), [13]);
    }

    #[test]
    fn integers_are_copied_as_written_when_plain_and_read_otherwise() {
        let line = |cost: &str, remaining: &str| format!(r#"{{"k":2,"t":5,"l":15,"w":"w","r":"r","s":"n","b":{{"identifier":"i","cost":{cost}}},"p":{{"data":{{"success":true,"limit":10,"remaining":{remaining},"reset":-3}}}}}}"#);
        let ints = |cost: &str, remaining: &str| {
            let r = rows(line(cost, remaining).as_bytes());
            let row = as_rows(&r.ratelimits);
            recycle(r);
            row.trim_end().split('\t').skip(6).map(str::to_owned).collect::<Vec<_>>()
        };
        assert_eq!(ints("2", "8"), ["10", "8", "-3", "2"]);
        assert_eq!(ints("2.9", "8e0"), ["10", "8", "-3", "2"], "a fraction or an exponent is cut to an integer");
        assert_eq!(ints("007", "-0"), ["10", "0", "-3", "7"], "a leading zero is read, not copied");
        assert_eq!(ints("\"x\"", "true"), ["10", "0", "-3", "1"], "what is no number is the default");
    }

    #[test]
    fn a_batch_read_into_recycled_columns_holds_only_its_own_rows() {
        let limit = |r: &str| format!(r#"{{"k":2,"t":9,"l":1,"w":"w","r":"{r}","s":"n","b":{{"identifier":"i\t"}},"p":{{"data":{{"success":true}}}}}}"#);
        let first = rows(format!("{}\n{}\n", limit("a"), limit("b")).as_bytes());
        assert_eq!((first.ratelimits.rows, first.ratelimits.escaped != 0), (2, true));
        recycle(first);
        let second = rows(br#"{"k":1,"t":3,"l":0,"w":"w","r":"c","s":"","b":{},"p":{"data":{"code":"VALID"}}}"#);
        assert_eq!((second.ratelimits.rows, second.ratelimits.escaped, second.min_time, second.unread), (0, 0, 3, 0));
        assert!((0..RATELIMIT_COLUMNS).all(|i| second.ratelimits.separated(i).is_empty()));
        assert_eq!(as_rows(&second.verifications), "c\t3\tw||VALID\t\t\t\t0\n");
    }

    #[test]
    fn a_body_naming_its_members_with_escapes_reads_as_the_server_read_it() {
        let limit = br#"{"k":2,"t":5,"l":1,"w":"w","r":"r1","s":"ns_1","b":{"namespace":"api","identifi\u0065r":"u","limit":5,"duration":1000,"\u0063ost":3},"p":{"data":{"success":true,"limit":5,"remaining":2,"reset":9}}}"#;
        let verify = br#"{"k":1,"t":6,"l":0,"w":"w","r":"r2","s":"a","b":{"key":"k","t\u0061gs":["x"],"cr\u0065dits":{"\u0063ost":7}},"p":{"data":{"code":"VALID","keyId":"key_1","credits":93}}}"#;
        let r = rows(&[&limit[..], b"\n", &verify[..], b"\n"].concat());
        assert_eq!(r.unread, 0);
        assert_eq!(as_rows(&r.ratelimits), "r1\t5\tw|ns_1|api|\tu\t1\t1\t5\t2\t9\t3\n");
        assert_eq!(as_rows(&r.verifications), "r2\t6\tw|a|VALID\t\tkey_1\t\u{1f}x\t7\n");
    }

    #[test]
    fn a_line_laid_out_otherwise_reads_the_same_member_by_member() {
        let as_written = br#"{"k":1,"t":1,"l":0,"w":"w","r":"r","s":"a","b":{"key":"k"},"p":{"meta":{"requestId":"r"},"data":{"code":"VALID","keyId":"key_1"}}}"#;
        let reordered = [
            &br#"{"p":{"meta":{"requestId":"r"},"data":{"code":"VALID","keyId":"key_1"}},"k":1,"t":1,"l":0,"w":"w","r":"r","s":"a","b":{"key":"k"}}"#[..],
            br#"{"k":1,"t":1,"l":0,"w":"w","r":"r","s":"a","b":{"key":"k"},"p":{"data":{"code":"VALID","keyId":"key_1"},"meta":{"requestId":"r"}}}"#,
            br#" { "k" : 1 , "t":1,"l":0,"w":"w","r":"r","s":"a","b":{"key":"k"},"p" : { "data" : {"code":"VALID","keyId":"key_1"} } } "#,
        ];
        let expected = as_rows(&rows(as_written).verifications);
        assert_eq!(expected, "r\t1\tw|a|VALID\t\tkey_1\t\t0\n");
        for line in reordered {
            let r = rows(line);
            assert_eq!((r.unread, as_rows(&r.verifications)), (0, expected.clone()), "{}", text_of(line));
        }
    }

    #[test]
    fn escapes_leave_no_separator_and_decode_json_escapes() {
        let mut out = Vec::new();
        assert!(text(&mut out, &decode(br#""a\tb\nc\u001fd\u0000e%f\ud83d\ude00g\ud800""#).unwrap()));
        assert_eq!(text_of(&out), "a%09b%0Ac%1Fd%00e%25f\u{1F600}g\u{FFFD}");
        assert!(!text(&mut out, b"plain"), "nothing to escape");
    }

    #[test]
    fn lines_that_are_not_events_are_counted_not_written() {
        let r = rows(b"not json\n{\"k\":1,\"t\":1,\"w\":\"w\",\"r\":\"r\",\"s\":\"\",\"b\":{},\"p\":{\"data\":{}}}\n{\"k\":1,\"t\":1,\"b\":{\"tags\":[\n\n");
        assert_eq!((r.unread, r.min_time), (3, i64::MAX));
        assert!(r.verifications.rows == 0 && r.ratelimits.rows == 0);
    }

    #[test]
    fn a_line_that_fails_halfway_leaves_no_part_of_a_row() {
        let bad_tag = br#"{"k":1,"t":1,"w":"w","r":"r1","s":"a","b":{"tags":["ok",7]},"p":{"data":{"code":"VALID"}}}"#;
        let bad_limit = br#"{"k":3,"t":2,"w":"w","r":"r2","s":"n1\nn2","b":[{"namespace":"a","identifier":"x"},7],"p":{"data":{"limits":[{"passed":true},{"passed":true}]}}}"#;
        let good = br#"{"k":1,"t":3,"w":"w","r":"r3","s":"a","b":{},"p":{"data":{"code":"VALID"}}}"#;
        let r = rows(&[&bad_tag[..], b"\n", &bad_limit[..], b"\n", &good[..]].concat());
        assert_eq!((r.unread, r.min_time), (2, 3));
        assert_eq!(as_rows(&r.verifications), "r3\t3\tw|a|VALID\t\t\t\t0\n");
        assert!(r.ratelimits.rows == 0);
    }
}
