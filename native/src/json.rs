//! Writing JSON text for the hot procedures' replies into a byte buffer (one string crosses
//! to JS, no objects are built field by field). Callers write fixed parts (`{"valid":`,
//! `,"code":`, …) as literal fragments with `raw`.

/// Bytes that need an escape inside a JSON string: control characters, `"` and `\`.
fn needs_escape(b: u8) -> bool {
    b < 0x20 || b == b'"' || b == b'\\'
}

/// Appends `s` (UTF-8 text) as a JSON string literal, escaped as JSON.stringify escapes it.
pub fn string(out: &mut Vec<u8>, s: &[u8]) {
    out.push(b'"');
    if !s.iter().any(|&b| needs_escape(b)) {
        out.extend_from_slice(s);
    } else {
        for &b in s {
            match b {
                b'"' => out.extend_from_slice(b"\\\""),
                b'\\' => out.extend_from_slice(b"\\\\"),
                b'\n' => out.extend_from_slice(b"\\n"),
                b'\r' => out.extend_from_slice(b"\\r"),
                b'\t' => out.extend_from_slice(b"\\t"),
                0x08 => out.extend_from_slice(b"\\b"),
                0x0c => out.extend_from_slice(b"\\f"),
                0..=0x1f => {
                    const HEX: &[u8; 16] = b"0123456789abcdef";
                    out.extend_from_slice(&[b'\\', b'u', b'0', b'0', HEX[usize::from(b >> 4)], HEX[usize::from(b & 15)]]);
                }
                _ => out.push(b),
            }
        }
    }
    out.push(b'"');
}

/// Appends literal JSON text (a fragment such as `,"code":`).
pub fn raw(out: &mut Vec<u8>, text: &str) {
    out.extend_from_slice(text.as_bytes());
}

/// `true` or `false`.
pub fn bool(out: &mut Vec<u8>, b: bool) {
    raw(out, if b { "true" } else { "false" });
}

const PAIRS: &[u8; 200] = b"00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899";

/// Appends the decimal digits of `v` (see `Int`).
pub fn int(out: &mut Vec<u8>, v: i64) {
    out.extend_from_slice(Int::new(v).text());
}

/// The decimal text of an integer, built on the stack (two digits per step, no allocation,
/// no formatter).
pub struct Int {
    text: [u8; 20],
    at: usize,
}

impl Int {
    pub fn new(v: i64) -> Int {
        let mut text = [0u8; 20];
        let mut at = text.len();
        let mut n = v.unsigned_abs();
        while n >= 100 {
            let pair = (n % 100) as usize * 2;
            n /= 100;
            at -= 2;
            text[at..at + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
        }
        if n >= 10 {
            at -= 2;
            text[at..at + 2].copy_from_slice(&PAIRS[n as usize * 2..n as usize * 2 + 2]);
        } else {
            at -= 1;
            text[at] = b'0' + n as u8;
        }
        if v < 0 {
            at -= 1;
            text[at] = b'-';
        }
        Int { text, at }
    }

    pub fn text(&self) -> &[u8] {
        &self.text[self.at..]
    }
}

pub fn strings<'a>(out: &mut Vec<u8>, items: impl IntoIterator<Item = &'a [u8]>) {
    out.push(b'[');
    for (i, s) in items.into_iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        string(out, s);
    }
    out.push(b']');
}

#[cfg(test)]
mod tests {
    #[test]
    fn escapes() {
        let mut out = Vec::new();
        super::string(&mut out, "a\"b\\c\nd\u{1}é\u{1f}\u{8}\u{c}".as_bytes());
        // As JSON.stringify writes it: \b and \f short, other control characters as \u00XX.
        assert_eq!(String::from_utf8(out).unwrap(), "\"a\\\"b\\\\c\\nd\\u0001é\\u001f\\b\\f\"");
        let mut plain = Vec::new();
        super::string(&mut plain, b"plain");
        assert_eq!(plain, b"\"plain\"");
    }

    #[test]
    fn ints() {
        for v in [0, 7, -7, 10, 99, 100, 101, -1_000, 1_999_999_999_999, i64::MAX, i64::MIN, -1] {
            let mut out = Vec::new();
            super::int(&mut out, v);
            assert_eq!(String::from_utf8(out).unwrap(), v.to_string());
        }
    }
}
