//! Reading JSON values out of event lines (event_rows.rs): lenient where it may be (the
//! engine wrote or accepted every line), never reading out of bounds: a malformed value
//! gives None. A value is taken as its text (a slice of the line), read only by whoever
//! needs what is in it.

use std::borrow::Cow;

struct Scan<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Scan<'a> {
    fn ws(&mut self) {
        while matches!(self.b.get(self.i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.i += 1;
        }
    }

    fn next(&mut self) -> Option<u8> {
        self.ws();
        let c = *self.b.get(self.i)?;
        self.i += 1;
        Some(c)
    }

    fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.b.get(self.i).copied()
    }

    /// A member's name and its colon: the name's text, its escapes decoded (`"t\u0061gs"` is
    /// `tags`, as the server read it).
    fn name(&mut self) -> Option<Cow<'a, [u8]>> {
        self.ws();
        let start = self.i;
        let escaped = self.string()?;
        let quoted = &self.b[start..self.i];
        let name = if escaped { decode(quoted)? } else { Cow::Borrowed(&quoted[1..quoted.len() - 1]) };
        (self.next()? == b':').then_some(name)
    }

    /// Skips a string starting at `i` (its opening quote); whether it holds an escape.
    fn string(&mut self) -> Option<bool> {
        (self.b.get(self.i) == Some(&b'"')).then_some(())?;
        self.i += 1;
        let mut escaped = false;
        loop {
            // Most of a line is the text of strings: eight bytes at a time up to a quote or a
            // backslash (the lowest byte holds_byte marks is the first such byte).
            while let Some(word) = self.b.get(self.i..self.i + 8) {
                let w = u64::from_le_bytes(word.try_into().ok()?);
                let found = holds_byte(w, b'"') | holds_byte(w, b'\\');
                if found != 0 {
                    self.i += (found.trailing_zeros() / 8) as usize;
                    break;
                }
                self.i += 8;
            }
            match *self.b.get(self.i)? {
                b'"' => {
                    self.i += 1;
                    return Some(escaped);
                }
                b'\\' => {
                    escaped = true;
                    self.i += 2;
                }
                _ => self.i += 1,
            }
        }
    }

    /// Skips one value and returns its text.
    fn value(&mut self) -> Option<&'a [u8]> {
        self.ws();
        let start = self.i;
        match *self.b.get(self.i)? {
            b'"' => {
                self.string()?;
            }
            b'{' | b'[' => {
                let mut depth = 0usize;
                loop {
                    match *self.b.get(self.i)? {
                        b'"' => {
                            self.string()?;
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth -= 1;
                            if depth == 0 {
                                self.i += 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                    self.i += 1;
                }
            }
            _ => {
                while let Some(c) = self.b.get(self.i) {
                    if matches!(c, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r') {
                        break;
                    }
                    self.i += 1;
                }
                (self.i > start).then_some(())?;
            }
        }
        Some(&self.b[start..self.i])
    }
}

/// Whether a byte of `w` is `b` (nonzero when one is).
const fn holds_byte(w: u64, b: u8) -> u64 {
    const ONES: u64 = u64::MAX / 255;
    let x = w ^ (ONES * b as u64);
    x.wrapping_sub(ONES) & !x & (ONES << 7)
}

/// Reads the object or array `text` (between `open` and `close`), each of its items by `item`
/// from where it starts; None unless `text` is that one value (white space around it aside).
fn items<'a>(text: &'a [u8], open: u8, close: u8, mut item: impl FnMut(&mut Scan<'a>) -> Option<()>) -> Option<()> {
    let mut s = Scan { b: text, i: 0 };
    (s.next()? == open).then_some(())?;
    if s.peek()? == close {
        s.i += 1;
    } else {
        loop {
            item(&mut s)?;
            match s.next()? {
                b',' => {}
                c if c == close => break,
                _ => return None,
            }
        }
    }
    s.ws();
    (s.i == text.len()).then_some(())
}

/// Calls `f` with each member of the object `obj` (its name's text, and its value's text);
/// None unless `obj` is that one object.
pub fn members<'a>(obj: &'a [u8], mut f: impl FnMut(&[u8], &'a [u8])) -> Option<()> {
    items(obj, b'{', b'}', |s| {
        let name = s.name()?;
        f(&name, s.value()?);
        Some(())
    })
}

/// The value of the member `last` of the object `obj`, cut as the text from after `"last":` up
/// to the object's closing brace, not read (the line's reply and the reply's data are most of
/// its bytes, and each is read once, by whoever takes it); `f` gets each member before it.
/// When `last` is not in fact the last member, the text cut is not one value, and reading it
/// fails (members and elements take only a whole value).
pub fn last_member<'a>(obj: &'a [u8], last: &[u8], mut f: impl FnMut(&[u8], &'a [u8])) -> Option<&'a [u8]> {
    let mut s = Scan { b: obj, i: 0 };
    (s.next()? == b'{').then_some(())?;
    loop {
        let name = s.name()?;
        if *name == *last {
            return obj[s.i..].trim_ascii().strip_suffix(b"}").map(<[u8]>::trim_ascii);
        }
        f(&name, s.value()?);
        (s.next()? == b',').then_some(())?;
    }
}

/// The value of the member `name` of the object `obj` (the last, when it names it twice: as
/// JSON.parse, and so the server, takes it).
pub fn member<'a>(obj: &'a [u8], name: &[u8]) -> Option<&'a [u8]> {
    let mut found = None;
    members(obj, |n, v| {
        if n == name {
            found = Some(v);
        }
    })?;
    found
}

/// Calls `f` with each element of the array `arr`; None unless `arr` is that one array.
pub fn elements<'a>(arr: &'a [u8], mut f: impl FnMut(&'a [u8])) -> Option<()> {
    items(arr, b'[', b']', |s| {
        f(s.value()?);
        Some(())
    })
}

/// A JSON integer as the engine writes them: digits (at most 18, so that it fits), `-` before
/// them or not, no leading zero, no `-0`.
pub fn plain_int(v: &[u8]) -> Option<i64> {
    let digits = v.strip_prefix(b"-").unwrap_or(v);
    if digits.is_empty() || digits.len() > 18 || (digits.len() > 1 && digits[0] == b'0') {
        return None;
    }
    let mut n = 0i64;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        n = n * 10 + i64::from(d - b'0');
    }
    match digits.len() < v.len() {
        true if n == 0 => None,
        true => Some(-n),
        false => Some(n),
    }
}

/// An integer (a number with a fraction or an exponent is cut to one).
pub fn int(v: &[u8]) -> Option<i64> {
    if let Some(n) = plain_int(v) {
        return Some(n);
    }
    let text = std::str::from_utf8(v).ok()?;
    text.parse::<i64>().ok().or_else(|| text.parse::<f64>().ok().filter(|f| f.is_finite()).map(|f| f as i64))
}

pub fn boolean(v: &[u8]) -> Option<bool> {
    match v {
        b"true" => Some(true),
        b"false" => Some(false),
        _ => None,
    }
}

/// The bytes of a JSON string (its text with the quotes); a `\u` escape of a lone surrogate
/// becomes U+FFFD.
pub fn decode(v: &[u8]) -> Option<Cow<'_, [u8]>> {
    let inner = v.strip_prefix(b"\"")?.strip_suffix(b"\"")?;
    if !inner.contains(&b'\\') {
        return Some(Cow::Borrowed(inner));
    }
    let mut out = Vec::with_capacity(inner.len());
    let mut i = 0;
    while i < inner.len() {
        let b = inner[i];
        if b != b'\\' {
            out.push(b);
            i += 1;
            continue;
        }
        let e = *inner.get(i + 1)?;
        i += 2;
        match e {
            b'"' | b'\\' | b'/' => out.push(e),
            b'n' => out.push(b'\n'),
            b't' => out.push(b'\t'),
            b'r' => out.push(b'\r'),
            b'b' => out.push(8),
            b'f' => out.push(12),
            b'u' => {
                let hi = hex4(inner.get(i..i + 4)?)?;
                i += 4;
                let c = if (0xD800..0xDC00).contains(&hi) && inner.get(i..i + 2) == Some(b"\\u") {
                    match hex4(inner.get(i + 2..i + 6)?) {
                        Some(lo) if (0xDC00..0xE000).contains(&lo) => {
                            i += 6;
                            char::from_u32(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00))
                        }
                        _ => None,
                    }
                } else {
                    char::from_u32(hi)
                };
                let mut utf8 = [0u8; 4];
                out.extend_from_slice(c.unwrap_or('\u{FFFD}').encode_utf8(&mut utf8).as_bytes());
            }
            _ => return None,
        }
    }
    Some(Cow::Owned(out))
}

fn hex4(h: &[u8]) -> Option<u32> {
    u32::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn member_names_are_read_with_their_escapes_decoded_and_the_last_of_a_name_counts() {
        let obj = br#"{"t\u0061gs":[1],"\u0063ost":2,"a\"b":3,"cost":4,"plain":5}"#;
        let mut seen = Vec::new();
        members(obj, |n, v| seen.push((text_of(n), text_of(v)))).unwrap();
        assert_eq!(seen, [("tags".into(), "[1]".into()), ("cost".into(), "2".into()), ("a\"b".into(), "3".into()), ("cost".into(), "4".into()), ("plain".into(), "5".into())]);
        assert_eq!(member(obj, b"cost"), Some(&b"4"[..]), "the last of two");
        assert_eq!(last_member(br#"{"\u006b":1,"\u0070":{"x":2}}"#, b"p", |_, _| {}), Some(&br#"{"x":2}"#[..]));
        assert_eq!(members(br#"{"bad\q":1}"#, |_, _| {}), None, "a name with an escape JSON has not");
    }

    fn text_of(v: &[u8]) -> String {
        String::from_utf8(v.to_vec()).unwrap()
    }

    #[test]
    fn strings_are_skipped_to_their_closing_quote_wherever_it_falls_in_a_word() {
        for len in 0..24 {
            for quoted in [false, true] {
                // A string of `len` bytes (an escaped quote among them), then the rest of an object.
                let mut text: String = "x".repeat(len);
                if quoted && len >= 2 {
                    text.replace_range(len / 2 - 1..len / 2 + 1, "\\\"");
                }
                let obj = format!(r#"{{"a":"{text}","b":"{text}}}","c":7}}"#);
                let mut seen = Vec::new();
                members(obj.as_bytes(), |n, v| seen.push((text_of(n), text_of(v)))).unwrap();
                assert_eq!(seen, [("a".into(), format!("\"{text}\"")), ("b".into(), format!("\"{text}}}\"")), ("c".into(), "7".into())], "{obj}");
            }
        }
        assert_eq!(holds_byte(u64::from_le_bytes(*b"abcdefg\""), b'"') != 0, true);
        assert_eq!(holds_byte(u64::from_le_bytes(*b"abcdefgh"), b'"'), 0);
        assert_eq!(holds_byte(u64::from_le_bytes([0xA2; 8]), b'"'), 0, "a byte with the high bit set is not a quote");
    }
}
