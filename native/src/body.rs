//! The request bodies of the hot procedures, read straight from JSON bytes: one reader per
//! procedure, for the bodies its schema (src/schemas) accepts, and nothing else.
//!
//! A hot call gets the body as the client sent it. When the reader accepts it, the call is
//! answered from it without JSON.parse and ajv; when it does not (a field out of its bounds,
//! an unknown or repeated field, a number written with a fraction or an exponent, a string
//! that is not valid UTF-8 or holds an unpaired surrogate escape, …), the call declines and
//! the full way in TypeScript parses and validates the body, answers the 400, or hands the
//! validated input back (re-serialised with JSON.stringify) to the same call, which this
//! reader then accepts. So the reader only has to be exact about what it accepts: each body
//! it accepts is one that ajv accepts, read to the same values (test/engine/hotBody.test.ts
//! sends bodies down both ways and compares the replies).
//!
//! Bounds are `BOUNDS`, one table named by schema paths: the engine's `hotBounds()` export
//! hands it to TypeScript, which refuses to start when a schema says otherwise
//! (src/engine/bounds.ts). String lengths count code points, as ajv's do.

use std::borrow::Cow;

use crate::limit::LimitRequest;
use crate::verify::Named;

/// `Number.MAX_SAFE_INTEGER`, the schemas' bound for limits and costs.
const MAX_SAFE: u64 = 9_007_199_254_740_991;

/// A string's length in code points, `min..=max`; `printable`: no control character
/// (U+0000–U+001F), the schema's pattern `^[^\u0000-\u001f]+$`.
#[derive(Clone, Copy)]
pub struct Text {
    pub min: u64,
    pub max: u64,
    pub printable: bool,
}

/// An integer in `min..=max`.
#[derive(Clone, Copy)]
pub struct Int {
    pub min: u64,
    pub max: u64,
}

/// An array of `min..=max` items.
#[derive(Clone, Copy)]
pub struct Items {
    pub min: u64,
    pub max: u64,
}

const fn text(min: u64, max: u64) -> Text {
    Text { min, max, printable: false }
}

const KEY: Text = text(1, 512);
const COST: Int = Int { min: 0, max: 1_000_000_000_000 };
const QUERY: Text = text(1, 1000);
const NAMED: Items = Items { min: 0, max: 100 };
const NAMED_NAME: Text = Text { min: 3, max: 255, printable: true };
const NAMED_LIMIT: Int = Int { min: 0, max: MAX_SAFE };
/// A window length in ms (ratelimits.limit duration, an ad-hoc verify limit): 1 s to 30 days.
const DURATION: Int = Int { min: 1_000, max: 2_592_000_000 };
const TAGS: Items = Items { min: 0, max: 20 };
const TAG: Text = text(1, 512);
const NAMESPACE: Text = text(1, 512);
const IDENTIFIER: Text = text(1, 512);
const LIMIT: Int = Int { min: 1, max: MAX_SAFE };
const LIMIT_COST: Int = Int { min: 0, max: MAX_SAFE };
const MANY: Items = Items { min: 1, max: 100 };

/// One bound and where it sits in a procedure's request schema.
#[derive(Clone, Copy)]
pub enum Bound {
    Text(Text),
    Int(Int),
    Items(Items),
}

/// Every bound the readers check: (procedure, schema path, bound). A path names properties
/// and `items` from the request schema's root, `/`-separated (`ratelimits/items/name` is
/// `properties.ratelimits.items.properties.name`).
pub const BOUNDS: &[(&str, &str, Bound)] = &[
    ("keys.verifyKey", "key", Bound::Text(KEY)),
    ("keys.verifyKey", "credits/cost", Bound::Int(COST)),
    ("keys.verifyKey", "permissions", Bound::Text(QUERY)),
    ("keys.verifyKey", "ratelimits", Bound::Items(NAMED)),
    ("keys.verifyKey", "ratelimits/items/name", Bound::Text(NAMED_NAME)),
    ("keys.verifyKey", "ratelimits/items/cost", Bound::Int(COST)),
    ("keys.verifyKey", "ratelimits/items/limit", Bound::Int(NAMED_LIMIT)),
    ("keys.verifyKey", "ratelimits/items/duration", Bound::Int(DURATION)),
    ("keys.verifyKey", "tags", Bound::Items(TAGS)),
    ("keys.verifyKey", "tags/items", Bound::Text(TAG)),
    ("ratelimits.limit", "namespace", Bound::Text(NAMESPACE)),
    ("ratelimits.limit", "identifier", Bound::Text(IDENTIFIER)),
    ("ratelimits.limit", "limit", Bound::Int(LIMIT)),
    ("ratelimits.limit", "duration", Bound::Int(DURATION)),
    ("ratelimits.limit", "cost", Bound::Int(LIMIT_COST)),
    ("ratelimits.multiLimit", "", Bound::Items(MANY)),
    ("ratelimits.multiLimit", "items/namespace", Bound::Text(NAMESPACE)),
    ("ratelimits.multiLimit", "items/identifier", Bound::Text(IDENTIFIER)),
    ("ratelimits.multiLimit", "items/limit", Bound::Int(LIMIT)),
    ("ratelimits.multiLimit", "items/duration", Bound::Int(DURATION)),
    ("ratelimits.multiLimit", "items/cost", Bound::Int(LIMIT_COST)),
];

/// `BOUNDS` as JSON: `[{procedure, path, kind: "text"|"int"|"items", min, max, printable?}]`.
pub fn bounds_json() -> Vec<u8> {
    use crate::json;
    let mut out = vec![b'['];
    for (i, (procedure, path, bound)) in BOUNDS.iter().enumerate() {
        json::raw(&mut out, if i > 0 { ",{\"procedure\":" } else { "{\"procedure\":" });
        json::string(&mut out, procedure.as_bytes());
        json::raw(&mut out, ",\"path\":");
        json::string(&mut out, path.as_bytes());
        let (kind, min, max, printable) = match *bound {
            Bound::Text(t) => ("text", t.min, t.max, Some(t.printable)),
            Bound::Int(n) => ("int", n.min, n.max, None),
            Bound::Items(n) => ("items", n.min, n.max, None),
        };
        json::raw(&mut out, ",\"kind\":");
        json::string(&mut out, kind.as_bytes());
        json::raw(&mut out, ",\"min\":");
        json::int(&mut out, min as i64);
        json::raw(&mut out, ",\"max\":");
        json::int(&mut out, max as i64);
        if let Some(p) = printable {
            json::raw(&mut out, ",\"printable\":");
            json::bool(&mut out, p);
        }
        out.push(b'}');
    }
    out.push(b']');
    out
}

/// keys.verifyKey's body (`tags` are read and dropped, as the full way does).
#[derive(Debug, PartialEq)]
pub struct VerifyBody<'a> {
    pub key: Cow<'a, str>,
    pub cost: Option<i64>,
    pub permissions: Option<Cow<'a, str>>,
    pub named: Vec<Named<'a>>,
}

/// One ratelimits.limit request: the namespace as named (a name or an id), and the request
/// with its `namespace_id` left empty for the caller to resolve.
#[derive(Debug, PartialEq)]
pub struct LimitBody<'a> {
    pub namespace: Cow<'a, str>,
    pub request: LimitRequest<'a>,
}

pub fn limit(body: &[u8]) -> Option<LimitBody<'_>> {
    let mut r = Reader { b: body, i: 0 };
    let item = limit_item(&mut r)?;
    r.end()?;
    Some(item)
}

/// ratelimits.multiLimit's body: an array of limit requests.
pub fn multi_limit(body: &[u8]) -> Option<Vec<LimitBody<'_>>> {
    let mut r = Reader { b: body, i: 0 };
    let mut items = Vec::new();
    r.array(MANY, |r| {
        items.push(limit_item(r)?);
        Some(())
    })?;
    r.end()?;
    Some(items)
}

fn limit_item<'a>(r: &mut Reader<'a>) -> Option<LimitBody<'a>> {
    let (mut namespace, mut identifier, mut limit, mut duration, mut cost) = (None, None, None, None, None);
    r.object(|name, r| match name {
        b"namespace" => once(&mut namespace, r.string(NAMESPACE)?),
        b"identifier" => once(&mut identifier, r.string(IDENTIFIER)?),
        b"limit" => once(&mut limit, r.int(LIMIT)?),
        b"duration" => once(&mut duration, r.int(DURATION)?),
        b"cost" => once(&mut cost, r.int(LIMIT_COST)?),
        _ => None,
    })?;
    let request = LimitRequest { namespace_id: Cow::Borrowed(""), identifier: identifier?, limit: limit?, duration_ms: duration?, cost: cost.unwrap_or(1) };
    Some(LimitBody { namespace: namespace?, request })
}

pub fn verify(body: &[u8]) -> Option<VerifyBody<'_>> {
    let mut r = Reader { b: body, i: 0 };
    let (mut key, mut cost, mut permissions, mut named, mut tags) = (None, None, None, None, None);
    r.object(|name, r| match name {
        b"key" => once(&mut key, r.string(KEY)?),
        b"credits" => {
            let mut c = None;
            r.object(|name, r| match name {
                b"cost" => once(&mut c, r.int(COST)?),
                _ => None,
            })?;
            once(&mut cost, c?)
        }
        b"permissions" => once(&mut permissions, r.string(QUERY)?),
        b"ratelimits" => {
            let mut items = Vec::new();
            r.array(NAMED, |r| {
                items.push(named_limit(r)?);
                Some(())
            })?;
            once(&mut named, items)
        }
        b"tags" => once(&mut tags, r.array(TAGS, |r| r.string(TAG).map(drop))?),
        _ => None,
    })?;
    r.end()?;
    Some(VerifyBody { key: key?, cost, permissions, named: named.unwrap_or_default() })
}

/// One entry of verifyKey's `ratelimits`: `limit` and `duration` come both or neither.
fn named_limit<'a>(r: &mut Reader<'a>) -> Option<Named<'a>> {
    let (mut name, mut cost, mut limit, mut duration) = (None, None, None, None);
    r.object(|field, r| match field {
        b"name" => once(&mut name, r.string(NAMED_NAME)?),
        b"cost" => once(&mut cost, r.int(COST)?),
        b"limit" => once(&mut limit, r.int(NAMED_LIMIT)?),
        b"duration" => once(&mut duration, r.int(DURATION)?),
        _ => None,
    })?;
    let ad_hoc = match (limit, duration) {
        (Some(l), Some(d)) => Some((l, d)),
        (None, None) => None,
        _ => return None,
    };
    Some(Named { name: name?, cost: cost.unwrap_or(1), ad_hoc })
}

/// Sets a field read for the first time; a repeated field is declined (JSON.parse would keep
/// the last, which the full way then hands back once).
fn once<T>(slot: &mut Option<T>, value: T) -> Option<()> {
    slot.is_none().then(|| *slot = Some(value))
}

/// A cursor over the body; every method returns `None` as soon as the text is not one the
/// schema accepts.
struct Reader<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Reader<'a> {
    /// Skips JSON's whitespace (space, tab, line feed, carriage return).
    fn ws(&mut self) {
        while matches!(self.b.get(self.i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.i += 1;
        }
    }

    /// The next byte after whitespace, consumed when it is `c`.
    fn eat(&mut self, c: u8) -> bool {
        self.ws();
        let hit = self.b.get(self.i) == Some(&c);
        self.i += usize::from(hit);
        hit
    }

    /// A string within `bound`: borrowed from the body unless it has escapes.
    fn string(&mut self, bound: Text) -> Option<Cow<'a, str>> {
        let s = self.raw_string()?;
        let (chars, control) = if s.is_ascii() { (s.len(), s.bytes().any(|b| b < 0x20)) } else { (s.chars().count(), s.chars().any(|c| c < '\u{20}')) };
        ((bound.min..=bound.max).contains(&(chars as u64)) && !(bound.printable && control)).then_some(s)
    }

    /// A string, decoded: printable ASCII without escapes (the common case) is borrowed.
    fn raw_string(&mut self) -> Option<Cow<'a, str>> {
        if !self.eat(b'"') {
            return None;
        }
        let start = self.i;
        loop {
            match *self.b.get(self.i)? {
                b'"' => {
                    self.i += 1;
                    return Some(Cow::Borrowed(std::str::from_utf8(&self.b[start..self.i - 1]).ok()?));
                }
                b'\\' => break,
                0x00..=0x1f => return None,
                _ => self.i += 1,
            }
        }
        // Escapes: decode into a new string, the part before the first one included.
        let mut out = std::str::from_utf8(&self.b[start..self.i]).ok()?.to_owned();
        loop {
            match *self.b.get(self.i)? {
                b'"' => {
                    self.i += 1;
                    return Some(Cow::Owned(out));
                }
                b'\\' => {
                    let escaped = *self.b.get(self.i + 1)?;
                    self.i += 2;
                    out.push(match escaped {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => {
                            let unit = self.hex4()?;
                            self.code_point(unit)?
                        }
                        _ => return None,
                    });
                }
                0x00..=0x1f => return None,
                _ => {
                    // A run of unescaped bytes up to the next quote or escape.
                    let run = self.i;
                    while !matches!(self.b.get(self.i), None | Some(b'"' | b'\\' | 0x00..=0x1f)) {
                        self.i += 1;
                    }
                    out.push_str(std::str::from_utf8(&self.b[run..self.i]).ok()?);
                }
            }
        }
    }

    /// Four hex digits at the cursor, consumed.
    fn hex4(&mut self) -> Option<u32> {
        let digits = self.b.get(self.i..self.i + 4)?;
        self.i += 4;
        digits.iter().try_fold(0u32, |n, &d| Some(n * 16 + char::from(d).to_digit(16)?))
    }

    /// The character of a `\u` escape whose code unit is `unit`, reading the low half of a
    /// surrogate pair when `unit` is a high half; an unpaired half is declined (it is not
    /// text, and the full way refuses it).
    fn code_point(&mut self, unit: u32) -> Option<char> {
        match unit {
            0xd800..=0xdbff => {
                if self.b.get(self.i..self.i + 2)? != b"\\u" {
                    return None;
                }
                self.i += 2;
                let low = self.hex4()?;
                if !(0xdc00..=0xdfff).contains(&low) {
                    return None;
                }
                char::from_u32(0x10000 + ((unit - 0xd800) << 10) + (low - 0xdc00))
            }
            0xdc00..=0xdfff => None,
            _ => char::from_u32(unit),
        }
    }

    /// An integer within `bound` written as plain digits (no sign, fraction or exponent, no
    /// leading zero).
    fn int(&mut self, bound: Int) -> Option<i64> {
        self.ws();
        let start = self.i;
        let mut value: u64 = 0;
        while let Some(&d @ b'0'..=b'9') = self.b.get(self.i) {
            value = value.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
            self.i += 1;
        }
        let digits = self.i - start;
        if digits == 0 || (digits > 1 && self.b[start] == b'0') || matches!(self.b.get(self.i), Some(b'.' | b'e' | b'E')) {
            return None;
        }
        (bound.min..=bound.max).contains(&value).then_some(value as i64)
    }

    /// An object: `field` reads the value of each member by its name.
    fn object(&mut self, mut field: impl FnMut(&[u8], &mut Self) -> Option<()>) -> Option<()> {
        if !self.eat(b'{') {
            return None;
        }
        if self.eat(b'}') {
            return Some(());
        }
        loop {
            let name = self.raw_string()?;
            if !self.eat(b':') {
                return None;
            }
            field(name.as_bytes(), self)?;
            if !self.eat(b',') {
                return self.eat(b'}').then_some(());
            }
        }
    }

    /// An array of `bound` items, each read by `item`.
    fn array(&mut self, bound: Items, mut item: impl FnMut(&mut Self) -> Option<()>) -> Option<()> {
        if !self.eat(b'[') {
            return None;
        }
        if self.eat(b']') {
            return (bound.min == 0).then_some(());
        }
        for n in 1..=bound.max {
            item(self)?;
            if !self.eat(b',') {
                return (self.eat(b']') && n >= bound.min).then_some(());
            }
        }
        None
    }

    /// Only whitespace is left.
    fn end(&mut self) -> Option<()> {
        self.ws();
        (self.i == self.b.len()).then_some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(name: &str, cost: i64, ad_hoc: Option<(i64, i64)>) -> Named<'_> {
        Named { name: Cow::Borrowed(name), cost, ad_hoc }
    }

    #[test]
    fn reads_limit_bodies() {
        let b = limit(br#" {"namespace":"api","identifier":"u1","limit":10,"duration":60000} "#).unwrap();
        assert_eq!((&*b.namespace, &*b.request.identifier, b.request.limit, b.request.duration_ms, b.request.cost), ("api", "u1", 10, 60_000, 1));
        let b = limit(b"{\n\t\"cost\" : 0 ,\"duration\":1000,\"limit\":9007199254740991,\"identifier\":\"x\",\"namespace\":\"n\"}").unwrap();
        assert_eq!((&*b.namespace, b.request.cost, b.request.limit, b.request.duration_ms), ("n", 0, 9_007_199_254_740_991, 1_000));
    }

    #[test]
    fn decodes_escapes_and_utf8_as_json_parse_does() {
        let b = limit("{\"namespace\":\"n\\u0041\\\"\\\\\\/\",\"identifier\":\"\u{e9}t\u{e9} \\ud83d\\ude00\",\"limit\":1,\"duration\":1000}".as_bytes()).unwrap();
        assert_eq!(&*b.namespace, "nA\"\\/");
        assert_eq!(&*b.request.identifier, "\u{e9}t\u{e9} \u{1f600}");
        assert!(matches!(b.namespace, Cow::Owned(_)) && matches!(b.request.identifier, Cow::Owned(_)));
        // Lengths count code points: 512 of a two-byte character is within bounds, 513 not.
        let ok = format!("{{\"namespace\":\"{}\",\"identifier\":\"i\",\"limit\":1,\"duration\":1000}}", "\u{e9}".repeat(512));
        assert!(limit(ok.as_bytes()).is_some());
        let long = format!("{{\"namespace\":\"{}\",\"identifier\":\"i\",\"limit\":1,\"duration\":1000}}", "\u{e9}".repeat(513));
        assert!(limit(long.as_bytes()).is_none());
    }

    #[test]
    fn anything_the_schema_refuses_is_declined() {
        let base = r#""namespace":"n","identifier":"i","limit":10,"duration":60000"#;
        for body in [
            format!("{{{base},\"cost\":1.0}}"),
            format!("{{{base},\"cost\":1e0}}"),
            format!("{{{base},\"cost\":-1}}"),
            format!("{{{base},\"cost\":01}}"),
            format!("{{{base},\"cost\":9007199254740992}}"),
            format!("{{{base},\"cost\":99999999999999999999999}}"),
            format!("{{{base},\"limit\":10}}"),
            format!("{{{base},\"extra\":1}}"),
            format!("{{{base}}} x"),
            format!("{{{base},}}"),
            format!("[{{{base}}}]"),
            r#"{"namespace":"n","identifier":"i","limit":10}"#.to_string(),
            r#"{"namespace":"n","identifier":"i","limit":0,"duration":60000}"#.to_string(),
            r#"{"namespace":"n","identifier":"i","limit":1,"duration":999}"#.to_string(),
            r#"{"namespace":"n","identifier":"i","limit":1,"duration":2592000001}"#.to_string(),
            r#"{"namespace":"","identifier":"i","limit":1,"duration":1000}"#.to_string(),
            r#"{"namespace":"n\ud800","identifier":"i","limit":1,"duration":1000}"#.to_string(),
            r#"{"namespace":"n\udc00\ud800","identifier":"i","limit":1,"duration":1000}"#.to_string(),
            r#"{"namespace":"n\x","identifier":"i","limit":1,"duration":1000}"#.to_string(),
            r#"{"namespace":"n\u12","identifier":"i","limit":1,"duration":1000}"#.to_string(),
            "{\"namespace\":\"n\tx\",\"identifier\":\"i\",\"limit\":1,\"duration\":1000}".to_string(),
            format!("{{\"namespace\":\"{}\",\"identifier\":\"i\",\"limit\":1,\"duration\":1000}}", "n".repeat(513)),
            r#"{"namespace":"n","identifier":"i","limit":"1","duration":1000}"#.to_string(),
            r#"{"namespace":"n","identifier":"i","limit":1,"duration":1000"#.to_string(),
            String::new(),
        ] {
            assert!(limit(body.as_bytes()).is_none(), "{body}");
        }
        // Not UTF-8.
        assert!(limit(b"{\"namespace\":\"n\xff\",\"identifier\":\"i\",\"limit\":1,\"duration\":1000}").is_none());
    }

    #[test]
    fn reads_multi_limit_bodies() {
        let items = multi_limit(br#"[{"namespace":"a","identifier":"x","limit":1,"duration":1000},{"namespace":"b","identifier":"y","limit":2,"duration":2000,"cost":0}]"#).unwrap();
        assert_eq!(items.len(), 2);
        assert_eq!((&*items[1].namespace, items[1].request.cost), ("b", 0));
        assert!(multi_limit(b"[]").is_none());
        let many = format!("[{}]", vec![r#"{"namespace":"a","identifier":"x","limit":1,"duration":1000}"#; 101].join(","));
        assert!(multi_limit(many.as_bytes()).is_none());
    }

    #[test]
    fn reads_verify_bodies() {
        assert_eq!(verify(br#"{"key":"sk_1"}"#).unwrap(), VerifyBody { key: Cow::Borrowed("sk_1"), cost: None, permissions: None, named: vec![] });
        let b = verify(br#"{"key":"k","credits":{"cost":0},"permissions":"a AND (b OR c)","tags":["x","y"],"ratelimits":[{"name":"rrr"},{"name":"sss","cost":3,"limit":0,"duration":1000}]}"#).unwrap();
        assert_eq!((b.cost, b.permissions.as_deref()), (Some(0), Some("a AND (b OR c)")));
        assert_eq!(b.named, vec![named("rrr", 1, None), named("sss", 3, Some((0, 1000)))]);
        assert_eq!(verify(br#"{"key":"k","ratelimits":[],"tags":[]}"#).unwrap().named, vec![]);
        assert_eq!(&*verify(br#"{"key":"k\"\u00e9"}"#).unwrap().key, "k\"\u{e9}");
    }

    #[test]
    fn verify_bodies_the_schema_refuses() {
        let tags = format!("[{}]", vec!["\"t\""; 21].join(","));
        let limits = format!("[{}]", vec![r#"{"name":"rrr"}"#; 101].join(","));
        for body in [
            r#"{}"#.to_string(),
            r#"{"key":""}"#.to_string(),
            r#"{"key":"k","credits":{}}"#.to_string(),
            r#"{"key":"k","credits":{"cost":1000000000001}}"#.to_string(),
            r#"{"key":"k","credits":null}"#.to_string(),
            r#"{"key":"k","permissions":""}"#.to_string(),
            r#"{"key":"k","ratelimits":[{"name":"rrr","limit":1}]}"#.to_string(),
            r#"{"key":"k","ratelimits":[{"name":"rr"}]}"#.to_string(),
            r#"{"key":"k","ratelimits":[{"name":"r\nr"}]}"#.to_string(),
            r#"{"key":"k","ratelimits":[{"cost":1}]}"#.to_string(),
            r#"{"key":"k","tags":[""]}"#.to_string(),
            format!(r#"{{"key":"k","tags":{tags}}}"#),
            format!(r#"{{"key":"k","ratelimits":{limits}}}"#),
            r#"{"key":"k","key":"k"}"#.to_string(),
            r#"{"key":"k","meta":{}}"#.to_string(),
        ] {
            assert_eq!(verify(body.as_bytes()), None, "{body}");
        }
    }

    #[test]
    fn bounds_json_lists_every_bound() {
        let text = String::from_utf8(bounds_json()).unwrap();
        assert_eq!(text.matches("\"procedure\"").count(), BOUNDS.len());
        assert!(text.contains(r#"{"procedure":"keys.verifyKey","path":"ratelimits/items/name","kind":"text","min":3,"max":255,"printable":true}"#));
    }
}
