//! The request bodies of the hot procedures read straight from the HTTP body bytes, when a
//! body is in its plain form: one JSON object of the procedure's own fields, each at most
//! once, strings of printable ASCII without escapes, integers written as plain digits, every
//! value within the bounds of the procedure's schema (src/schemas). Any other body, valid or
//! not, reads as `None` and takes the full way through JSON.parse and ajv in TypeScript,
//! which owns every error message. So this reader only has to be exact about what it
//! accepts: each body it accepts is one that ajv accepts, read to the same values
//! (test/engine/hotBody.test.ts sends bodies down both ways and compares the replies).

use crate::limit::LimitRequest;
use crate::verify::Named;

/// `Number.MAX_SAFE_INTEGER`, the schemas' bound for limits and costs.
const MAX_SAFE: u64 = 9_007_199_254_740_991;
/// Bounds of a window length in ms (ratelimits.limit duration, an ad-hoc verify limit).
const DURATION_MS: (u64, u64) = (1_000, 2_592_000_000);
/// keys.verifyKey bound of credits.cost and of a named limit's cost.
const MAX_VERIFY_COST: u64 = 1_000_000_000_000;


/// keys.verifyKey's body (`tags` are read and dropped, as the full way does).
#[derive(Debug, PartialEq)]
pub struct VerifyBody<'a> {
    pub key: &'a str,
    pub cost: Option<i64>,
    pub permissions: Option<&'a str>,
    pub named: Vec<Named<'a>>,
}

/// ratelimits.limit's body: the namespace as named (name or id), and the request with its
/// `namespace_id` left empty for the caller to resolve.
pub fn limit(body: &[u8]) -> Option<(&str, LimitRequest<'_>)> {
    let mut r = Plain { b: body, i: 0 };
    let (mut namespace, mut identifier, mut limit, mut duration, mut cost) = (None, None, None, None, None);
    r.object(|name, r| match name {
        b"namespace" => once(&mut namespace, r.string(1, 512)?),
        b"identifier" => once(&mut identifier, r.string(1, 512)?),
        b"limit" => once(&mut limit, r.int(1, MAX_SAFE)?),
        b"duration" => once(&mut duration, r.int(DURATION_MS.0, DURATION_MS.1)?),
        b"cost" => once(&mut cost, r.int(0, MAX_SAFE)?),
        _ => None,
    })?;
    r.end()?;
    Some((namespace?, LimitRequest { namespace_id: "", identifier: identifier?, limit: limit?, duration_ms: duration?, cost: cost.unwrap_or(1) }))
}

pub fn verify(body: &[u8]) -> Option<VerifyBody<'_>> {
    let mut r = Plain { b: body, i: 0 };
    let (mut key, mut cost, mut permissions, mut named, mut tags) = (None, None, None, None, None);
    r.object(|name, r| match name {
        b"key" => once(&mut key, r.string(1, 512)?),
        b"credits" => {
            let mut c = None;
            r.object(|name, r| match name {
                b"cost" => once(&mut c, r.int(0, MAX_VERIFY_COST)?),
                _ => None,
            })?;
            once(&mut cost, c?)
        }
        b"permissions" => once(&mut permissions, r.string(1, 1000)?),
        b"ratelimits" => {
            let mut items = Vec::new();
            r.array(100, |r| {
                items.push(named_limit(r)?);
                Some(())
            })?;
            once(&mut named, items)
        }
        b"tags" => once(&mut tags, r.array(20, |r| r.string(1, 512).map(drop))?),
        _ => None,
    })?;
    r.end()?;
    Some(VerifyBody { key: key?, cost, permissions, named: named.unwrap_or_default() })
}

/// One entry of verifyKey's `ratelimits`: `limit` and `duration` come both or neither.
fn named_limit<'a>(r: &mut Plain<'a>) -> Option<Named<'a>> {
    let (mut name, mut cost, mut limit, mut duration) = (None, None, None, None);
    r.object(|field, r| match field {
        b"name" => once(&mut name, r.string(3, 255)?),
        b"cost" => once(&mut cost, r.int(0, MAX_VERIFY_COST)?),
        b"limit" => once(&mut limit, r.int(0, MAX_SAFE)?),
        b"duration" => once(&mut duration, r.int(DURATION_MS.0, DURATION_MS.1)?),
        _ => None,
    })?;
    let ad_hoc = match (limit, duration) {
        (Some(l), Some(d)) => Some((l, d)),
        (None, None) => None,
        _ => return None,
    };
    Some(Named { name: name?, cost: cost.unwrap_or(1), ad_hoc })
}

/// Sets a field read for the first time; a repeated field is not the plain form.
fn once<T>(slot: &mut Option<T>, value: T) -> Option<()> {
    slot.is_none().then(|| *slot = Some(value))
}

/// A cursor over the body; every method returns `None` as soon as the text leaves the plain
/// form.
struct Plain<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Plain<'a> {
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

    /// A string of printable ASCII without escapes, `min..=max` characters long.
    fn string(&mut self, min: usize, max: usize) -> Option<&'a str> {
        let raw = self.raw_string()?;
        (min..=max).contains(&raw.len()).then_some(())?;
        // Printable ASCII is UTF-8; this never fails.
        std::str::from_utf8(raw).ok()
    }

    fn raw_string(&mut self) -> Option<&'a [u8]> {
        if !self.eat(b'"') {
            return None;
        }
        let start = self.i;
        loop {
            match *self.b.get(self.i)? {
                b'"' => break,
                b'\\' => return None,
                0x20..=0x7e => self.i += 1,
                _ => return None,
            }
        }
        self.i += 1;
        Some(&self.b[start..self.i - 1])
    }

    /// An integer in `min..=max` written as plain digits (no sign, fraction or exponent,
    /// no leading zero).
    fn int(&mut self, min: u64, max: u64) -> Option<i64> {
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
        (min..=max).contains(&value).then_some(value as i64)
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
            field(name, self)?;
            if !self.eat(b',') {
                return self.eat(b'}').then_some(());
            }
        }
    }

    /// An array of at most `max` items, each read by `item`.
    fn array(&mut self, max: usize, mut item: impl FnMut(&mut Self) -> Option<()>) -> Option<()> {
        if !self.eat(b'[') {
            return None;
        }
        if self.eat(b']') {
            return Some(());
        }
        for _ in 0..max {
            item(self)?;
            if !self.eat(b',') {
                return self.eat(b']').then_some(());
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

    #[test]
    fn reads_plain_limit_bodies() {
        let (ns, b) = limit(br#" {"namespace":"api","identifier":"u1","limit":10,"duration":60000} "#).unwrap();
        assert_eq!((ns, b.identifier, b.limit, b.duration_ms, b.cost), ("api", "u1", 10, 60_000, 1));
        let (ns, b) = limit(b"{\n\t\"cost\" : 0 ,\"duration\":1000,\"limit\":9007199254740991,\"identifier\":\"x\",\"namespace\":\"n\"}").unwrap();
        assert_eq!((ns, b.cost, b.limit, b.duration_ms), ("n", 0, 9_007_199_254_740_991, 1_000));
    }

    #[test]
    fn anything_else_is_not_the_plain_form() {
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
            r#"{"namespace":"n\u0041","identifier":"i","limit":1,"duration":1000}"#.to_string(),
            "{\"namespace\":\"n\u{e9}\",\"identifier\":\"i\",\"limit\":1,\"duration\":1000}".to_string(),
            "{\"namespace\":\"n\tx\",\"identifier\":\"i\",\"limit\":1,\"duration\":1000}".to_string(),
            format!("{{\"namespace\":\"{}\",\"identifier\":\"i\",\"limit\":1,\"duration\":1000}}", "n".repeat(513)),
            r#"{"namespace":"n","identifier":"i","limit":"1","duration":1000}"#.to_string(),
            r#"{"namespace":"n","identifier":"i","limit":1,"duration":1000"#.to_string(),
            String::new(),
        ] {
            assert!(limit(body.as_bytes()).is_none(), "{body}");
        }
    }

    #[test]
    fn reads_plain_verify_bodies() {
        assert_eq!(verify(br#"{"key":"sk_1"}"#).unwrap(), VerifyBody { key: "sk_1", cost: None, permissions: None, named: vec![] });
        let b = verify(br#"{"key":"k","credits":{"cost":0},"permissions":"a AND (b OR c)","tags":["x","y"],"ratelimits":[{"name":"rrr"},{"name":"sss","cost":3,"limit":0,"duration":1000}]}"#).unwrap();
        assert_eq!((b.cost, b.permissions), (Some(0), Some("a AND (b OR c)")));
        assert_eq!(b.named, vec![Named { name: "rrr", cost: 1, ad_hoc: None }, Named { name: "sss", cost: 3, ad_hoc: Some((0, 1000)) }]);
        assert_eq!(verify(br#"{"key":"k","ratelimits":[],"tags":[]}"#).unwrap().named, vec![]);
    }

    #[test]
    fn verify_bodies_out_of_the_plain_form() {
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
}
