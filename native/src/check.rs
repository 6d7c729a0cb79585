//! The store's integrity, read from its data file page by page (LMDB 0.9's on-disk format)
//! without LMDB: a damaged page makes LMDB fail an assertion and abort the process, where
//! this walk reports it. Used before the store is opened (`keyward serve`, `keyward check`,
//! `keyward restore`), so a damaged store is refused with a message instead of being served.
//!
//! What it checks, from the newest valid meta page (pages 0 and 1):
//! - the meta page: LMDB's magic and data version, a page size it can use, a last page the
//!   file holds (a truncated file is damage);
//! - every table's B-tree (the main tree names the tables; each table a tree of its own, and
//!   LMDB's free-page tree): each page is within the file and in use once, says the number it
//!   is stored at, is a branch or leaf as its place in the tree needs, has bounds and entry
//!   offsets inside the page, keys in ascending order, leaves all at the tree's depth; large
//!   values' overflow pages exist and fit; the entry and page counts the tree records agree
//!   with what the walk found; no page is both in a tree and free;
//! - the tables present: `expected` names the tables keyward creates; one missing is damage
//!   once the store records that it had it (`TABLES_MARK` in table `meta`, written at open).
//!
//! A walk given a time budget (the start-up check of a big store) stops when it is spent and
//! says how far it got. Reading a store another process writes: LMDB never rewrites the
//! pages of the last two commits, so a walk is trustworthy when the newest commit moved at
//! most one on during it (`Report::settled`); callers walk again otherwise.

use std::collections::HashMap;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::json;
use crate::store::{self, StoreError, Table};

/// Key in table `meta` under which open records the tables the store has (names, '\n').
pub const TABLES_MARK: &[u8] = b"store/tables";

const PAGE_HEADER: usize = 16;
const MAGIC: u32 = 0xBEEF_C0DE;
const DATA_VERSION: u32 = 1;
const P_BRANCH: u16 = 0x01;
const P_LEAF: u16 = 0x02;
const P_OVERFLOW: u16 = 0x04;
const P_META: u16 = 0x08;
/// Flags LMDB may leave on a written page that say nothing of its kind.
const P_IGNORED: u16 = 0x10 | 0x4000 | 0x8000;
const F_BIGDATA: u16 = 0x01;
const F_SUBDATA: u16 = 0x02;
const F_DUPDATA: u16 = 0x04;
const MDB_INTEGERKEY: u16 = 0x08;
const DB_BYTES: usize = 48;
const NODE_HEADER: usize = 8;
const P_INVALID: u64 = u64::MAX;
/// Problems listed at most (a badly damaged store would list thousands).
const MAX_PROBLEMS: usize = 20;

#[derive(Clone, Copy, Debug, Default)]
struct Db {
    flags: u16,
    depth: u16,
    branch_pages: u64,
    leaf_pages: u64,
    overflow_pages: u64,
    entries: u64,
    root: u64,
}

impl Db {
    fn decode(b: &[u8]) -> Db {
        Db {
            flags: u16le(b, 4),
            depth: u16le(b, 6),
            branch_pages: u64le(b, 8),
            leaf_pages: u64le(b, 16),
            overflow_pages: u64le(b, 24),
            entries: u64le(b, 32),
            root: u64le(b, 40),
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct Meta {
    page_size: usize,
    free: Db,
    main: Db,
    last_page: u64,
    txn_id: u64,
}

#[derive(Debug, Default)]
pub struct Report {
    pub page_size: u64,
    /// The commit walked (the newest meta page's transaction id).
    pub txn_id: u64,
    /// Bytes of the data file in use: (last page + 1) × page size.
    pub used_bytes: u64,
    /// Tables found, with their entries.
    pub tables: Vec<(String, u64)>,
    pub pages: u64,
    /// The walk covered every page (false: the budget ran out first).
    pub complete: bool,
    /// No commit moved the store on by more than one while it was walked.
    pub settled: bool,
    pub problems: Vec<String>,
    /// No data file: a store not created yet.
    pub empty: bool,
}

impl Report {
    fn problem(&mut self, text: String) {
        if self.problems.len() < MAX_PROBLEMS {
            self.problems.push(text);
        }
    }
}

fn u16le(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}
fn u32le(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}
fn u64le(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

fn read_meta(file: &File, offset: u64) -> Result<Meta, String> {
    let mut b = [0u8; PAGE_HEADER + 136];
    file.read_exact_at(&mut b, offset).map_err(|e| format!("cannot read the meta page at byte {offset}: {e}"))?;
    if u16le(&b, 10) & !P_IGNORED != P_META {
        return Err(format!("the page at byte {offset} is not a meta page"));
    }
    let m = &b[PAGE_HEADER..];
    if u32le(m, 0) != MAGIC {
        return Err(format!("the meta page at byte {offset} lacks LMDB's magic number"));
    }
    if u32le(m, 4) != DATA_VERSION {
        return Err(format!("the meta page at byte {offset} has data version {} (LMDB 0.9 writes {DATA_VERSION})", u32le(m, 4)));
    }
    let free = Db::decode(&m[24..24 + DB_BYTES]);
    let page_size = u32le(m, 24) as usize;
    if !(512..=65536).contains(&page_size) || !page_size.is_power_of_two() {
        return Err(format!("the meta page at byte {offset} names a page size of {page_size}"));
    }
    Ok(Meta { page_size, free, main: Db::decode(&m[24 + DB_BYTES..24 + 2 * DB_BYTES]), last_page: u64le(m, 120), txn_id: u64le(m, 128) })
}

/// The newest valid meta page (LMDB opens that one), or why there is none.
fn newest_meta(file: &File) -> Result<Meta, String> {
    let first = read_meta(file, 0);
    let page_size = first.as_ref().map_or(4096, |m| m.page_size);
    let second = read_meta(file, page_size as u64);
    match (first, second) {
        (Ok(a), Ok(b)) => Ok(if b.txn_id > a.txn_id { b } else { a }),
        (Ok(a), Err(_)) => Ok(a),
        (Err(_), Ok(b)) => Ok(b),
        (Err(a), Err(b)) => Err(format!("{a}; {b}")),
    }
}

struct Walk<'a> {
    file: &'a File,
    meta: Meta,
    report: &'a mut Report,
    /// One bit per page: seen in a tree.
    seen: Vec<u64>,
    free: Vec<u64>,
    deadline: Option<Instant>,
    out_of_time: bool,
    page: Vec<u8>,
}

/// What a tree held, counted as its Db record counts them.
#[derive(Default)]
struct Counted {
    branch: u64,
    leaf: u64,
    overflow: u64,
    entries: u64,
}

impl Walk<'_> {
    fn mark(&mut self, pgno: u64) -> bool {
        let (word, bit) = ((pgno / 64) as usize, 1u64 << (pgno % 64));
        let fresh = self.seen[word] & bit == 0;
        self.seen[word] |= bit;
        fresh
    }

    fn read(&mut self, pgno: u64, pages: usize) -> Result<(), String> {
        let bytes = pages * self.meta.page_size;
        self.page.resize(bytes, 0);
        self.file
            .read_exact_at(&mut self.page, pgno * self.meta.page_size as u64)
            .map_err(|e| format!("page {pgno} cannot be read: {e}"))
    }

    /// Walks the tree of `db` (named `name`); `leaf_entry` sees each leaf entry (key, flags, data).
    fn tree(&mut self, name: &str, db: Db, leaf_entry: &mut dyn FnMut(&mut Self, &[u8], u16, &[u8])) {
        if db.root == P_INVALID {
            if db.entries != 0 || db.depth != 0 {
                self.report.problem(format!("table {name}: no root page, yet {} entries at depth {}", db.entries, db.depth));
            }
            return;
        }
        let ordered = db.flags & MDB_INTEGERKEY == 0;
        let mut counted = Counted::default();
        // (page, its depth in the tree)
        let mut stack: Vec<(u64, u16)> = vec![(db.root, 1)];
        while let Some((pgno, depth)) = stack.pop() {
            if self.out_of_time || self.report.problems.len() >= MAX_PROBLEMS {
                return;
            }
            if self.deadline.is_some_and(|d| Instant::now() >= d) {
                self.out_of_time = true;
                return;
            }
            if let Err(p) = self.node_page(pgno, depth, db, ordered, &mut counted, &mut stack, leaf_entry) {
                self.report.problem(format!("table {name}: {p}"));
            }
        }
        let found = [counted.branch, counted.leaf, counted.overflow, counted.entries];
        let recorded = [db.branch_pages, db.leaf_pages, db.overflow_pages, db.entries];
        if found != recorded && !self.out_of_time && self.report.problems.is_empty() {
            self.report.problem(format!(
                "table {name}: the tree records {} branch, {} leaf and {} overflow pages with {} entries; the walk found {}, {}, {} and {}",
                recorded[0], recorded[1], recorded[2], recorded[3], found[0], found[1], found[2], found[3]
            ));
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn node_page(
        &mut self,
        pgno: u64,
        depth: u16,
        db: Db,
        ordered: bool,
        counted: &mut Counted,
        stack: &mut Vec<(u64, u16)>,
        leaf_entry: &mut dyn FnMut(&mut Self, &[u8], u16, &[u8]),
    ) -> Result<(), String> {
        if pgno < 2 || pgno > self.meta.last_page {
            return Err(format!("a reference to page {pgno}, outside the store's pages 2–{}", self.meta.last_page));
        }
        if !self.mark(pgno) {
            return Err(format!("page {pgno} is reached twice"));
        }
        self.report.pages += 1;
        self.read(pgno, 1)?;
        let psize = self.meta.page_size;
        let p = std::mem::take(&mut self.page);
        let result = (|| {
            if u64le(&p, 0) != pgno {
                return Err(format!("page {pgno} says it is page {} (overwritten?)", u64le(&p, 0)));
            }
            let flags = u16le(&p, 10) & !P_IGNORED;
            let leaf = depth == db.depth;
            let want = if leaf { P_LEAF } else { P_BRANCH };
            if flags != want {
                return Err(format!("page {pgno} has flags {flags:#x} where a {} page belongs (depth {depth} of {})", if leaf { "leaf" } else { "branch" }, db.depth));
            }
            let (lower, upper) = (u16le(&p, 12) as usize, u16le(&p, 14) as usize);
            if lower < PAGE_HEADER || lower > upper || upper > psize || (lower - PAGE_HEADER) % 2 != 0 {
                return Err(format!("page {pgno} has bounds {lower}–{upper} in a page of {psize}"));
            }
            let n = (lower - PAGE_HEADER) / 2;
            if n == 0 {
                return Err(format!("page {pgno} holds no entries"));
            }
            if leaf {
                counted.leaf += 1;
                counted.entries += n as u64;
            } else {
                counted.branch += 1;
            }
            let mut prev: Option<&[u8]> = None;
            for i in 0..n {
                let off = u16le(&p, PAGE_HEADER + 2 * i) as usize;
                if off < upper || off + NODE_HEADER > psize {
                    return Err(format!("page {pgno}: entry {i} at offset {off} is outside {upper}–{psize}"));
                }
                let (lo, hi, nflags, ksize) = (u16le(&p, off) as u64, u16le(&p, off + 2) as u64, u16le(&p, off + 4), u16le(&p, off + 6) as usize);
                let key_end = off + NODE_HEADER + ksize;
                if key_end > psize {
                    return Err(format!("page {pgno}: entry {i}'s key runs past the page"));
                }
                let key = &p[off + NODE_HEADER..key_end];
                if ordered && (i > 0 || leaf) {
                    if let Some(before) = prev {
                        if before >= key {
                            return Err(format!("page {pgno}: keys out of order at entry {i}"));
                        }
                    }
                    prev = Some(key);
                }
                if !leaf {
                    let child = lo | (hi << 16) | ((nflags as u64) << 32);
                    stack.push((child, depth + 1));
                    continue;
                }
                let dsize = (lo | (hi << 16)) as usize;
                if nflags & F_DUPDATA != 0 {
                    return Err(format!("page {pgno}: entry {i} holds duplicates, which keyward's tables never have"));
                }
                if nflags & F_BIGDATA != 0 {
                    if key_end + 8 > psize {
                        return Err(format!("page {pgno}: entry {i}'s overflow reference runs past the page"));
                    }
                    let first = u64le(&p, key_end);
                    let data = self.overflow(first, dsize, counted)?;
                    leaf_entry(self, key, nflags, &data);
                } else {
                    if key_end + dsize > psize {
                        return Err(format!("page {pgno}: entry {i}'s value runs past the page"));
                    }
                    leaf_entry(self, key, nflags, &p[key_end..key_end + dsize]);
                }
            }
            Ok(())
        })();
        self.page = p;
        result
    }

    /// A large value's overflow pages: present, in use once, long enough for `dsize` bytes.
    fn overflow(&mut self, first: u64, dsize: usize, counted: &mut Counted) -> Result<Vec<u8>, String> {
        let psize = self.meta.page_size;
        let pages = (PAGE_HEADER + dsize).div_ceil(psize) as u64;
        if first < 2 || first + pages - 1 > self.meta.last_page {
            return Err(format!("a large value's pages {first}–{} are outside the store's pages 2–{}", first + pages - 1, self.meta.last_page));
        }
        self.read(first, 1)?;
        if u64le(&self.page, 0) != first || u16le(&self.page, 10) & !P_IGNORED != P_OVERFLOW {
            return Err(format!("page {first} should start a large value (overwritten?)"));
        }
        let recorded = u32le(&self.page, 12) as u64;
        if recorded < pages {
            return Err(format!("page {first}: a large value of {dsize} bytes on {recorded} pages"));
        }
        for pg in first..first + recorded {
            if !self.mark(pg) {
                return Err(format!("page {pg} is reached twice"));
            }
        }
        counted.overflow += recorded;
        self.report.pages += recorded;
        self.read(first, pages as usize)?;
        Ok(self.page[PAGE_HEADER..PAGE_HEADER + dsize].to_vec())
    }
}

/// Walks the data file of the store in `dir`. `budget`: stop once it is spent (the report
/// says `complete: false`). `expected`: the tables keyward creates.
pub fn check_dir(dir: &Path, expected: &[&str], budget: Option<Duration>) -> Report {
    let mut report = Report::default();
    let path = dir.join("data.mdb");
    let file = match File::open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            report.empty = true;
            report.complete = true;
            report.settled = true;
            return report;
        }
        Err(e) => {
            report.problem(format!("{} cannot be opened: {e}", path.display()));
            return report;
        }
    };
    let meta = match newest_meta(&file) {
        Ok(m) => m,
        Err(e) => {
            report.problem(format!("no valid meta page: {e}"));
            return report;
        }
    };
    report.page_size = meta.page_size as u64;
    report.txn_id = meta.txn_id;
    report.used_bytes = (meta.last_page + 1) * meta.page_size as u64;
    let file_bytes = file.metadata().map(|m| m.len()).unwrap_or(0);
    if file_bytes < report.used_bytes {
        report.problem(format!("the data file is {file_bytes} bytes, short of the {} its pages need (truncated?)", report.used_bytes));
        return report;
    }
    let mut walk = Walk {
        file: &file,
        meta,
        report: &mut report,
        seen: vec![0; (meta.last_page / 64 + 1) as usize],
        free: Vec::new(),
        deadline: budget.map(|b| Instant::now() + b),
        out_of_time: false,
        page: Vec::with_capacity(meta.page_size),
    };
    // The free-page tree: key a transaction id, value its freed pages (count, then numbers).
    walk.tree("(free pages)", meta.free, &mut |w, _key, _flags, data| {
        if data.len() >= 8 {
            let n = u64le(data, 0) as usize;
            if data.len() >= 8 * (n + 1) {
                w.free.extend((1..=n).map(|i| u64le(data, 8 * i)));
            }
        }
    });
    let mut tables: Vec<(String, Db)> = Vec::new();
    walk.tree("(main)", meta.main, &mut |w, key, flags, data| {
        let name = String::from_utf8_lossy(key).into_owned();
        if flags & F_SUBDATA != 0 && data.len() == DB_BYTES {
            tables.push((name, Db::decode(data)));
        } else {
            w.report.problem(format!("the main tree holds '{name}', which is not a table"));
        }
    });
    let mut marked: Option<Vec<u8>> = None;
    for (name, db) in &tables {
        walk.report.tables.push((name.clone(), db.entries));
        let is_meta = name == "meta";
        walk.tree(name, *db, &mut |_w, key, _flags, data| {
            if is_meta && key == TABLES_MARK {
                marked = Some(data.to_vec());
            }
        });
    }
    let complete = !walk.out_of_time;
    for pg in std::mem::take(&mut walk.free) {
        if pg > meta.last_page {
            walk.report.problem(format!("the free list names page {pg}, past the last page {}", meta.last_page));
        } else if complete && !walk.mark(pg) {
            walk.report.problem(format!("page {pg} is both in use and on the free list"));
        }
    }
    report.complete = complete;
    let present: HashMap<&str, ()> = tables.iter().map(|(n, _)| (n.as_str(), ())).collect();
    if let Some(mark) = &marked {
        for had in String::from_utf8_lossy(mark).split('\n').filter(|n| !n.is_empty()) {
            if expected.contains(&had) && !present.contains_key(had) {
                report.problem(format!("table {had} is missing (the store had it)"));
            }
        }
    } else if complete && !tables.is_empty() && !present.contains_key("meta") {
        report.problem("table meta is missing".to_string());
    }
    // Walked while another process committed: trustworthy if the newest commit moved at most one on.
    report.settled = newest_meta(&file).map_or(false, |m| m.txn_id <= meta.txn_id + 1);
    report
}

impl Report {
    /// The report as JSON: {empty, complete, settled, pageSize, txnId, usedBytes, pages,
    /// tables: [[name, entries]], problems: [text]}.
    pub fn json(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(256);
        json::raw(&mut out, "{\"empty\":");
        json::bool(&mut out, self.empty);
        json::raw(&mut out, ",\"complete\":");
        json::bool(&mut out, self.complete);
        json::raw(&mut out, ",\"settled\":");
        json::bool(&mut out, self.settled);
        for (name, v) in [("pageSize", self.page_size), ("txnId", self.txn_id), ("usedBytes", self.used_bytes), ("pages", self.pages)] {
            json::raw(&mut out, &format!(",\"{name}\":"));
            json::int(&mut out, v as i64);
        }
        json::raw(&mut out, ",\"tables\":[");
        for (i, (name, entries)) in self.tables.iter().enumerate() {
            json::raw(&mut out, if i == 0 { "[" } else { ",[" });
            json::string(&mut out, name.as_bytes());
            json::raw(&mut out, ",");
            json::int(&mut out, *entries as i64);
            json::raw(&mut out, "]");
        }
        json::raw(&mut out, "],\"problems\":");
        json::strings(&mut out, self.problems.iter().map(|p| p.as_bytes()));
        json::raw(&mut out, "}");
        out
    }
}

/// Records the tables the open store has (`TABLES_MARK`) unless it says so already: from then
/// on one missing is damage.
pub fn mark_tables() -> Result<(), StoreError> {
    let names: Vec<&str> = Table::ALL.iter().map(|t| t.name()).collect();
    let want = names.join("\n");
    if store::get(Table::META, TABLES_MARK, |v| v == Some(want.as_bytes()))? {
        return Ok(());
    }
    store::transaction(|| store::put(Table::META, TABLES_MARK, want.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_file_is_an_empty_store() {
        let r = check_dir(Path::new("/nonexistent-keyward-dir"), &["meta"], None);
        assert!(r.empty && r.problems.is_empty());
    }

    #[test]
    fn garbage_is_no_store() {
        let dir = std::env::temp_dir().join(format!("kw-check-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("data.mdb"), vec![7u8; 8192]).unwrap();
        let r = check_dir(&dir, &["meta"], None);
        assert!(r.problems.iter().any(|p| p.contains("no valid meta page")), "{:?}", r.problems);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
