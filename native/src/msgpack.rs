//! A minimal MessagePack reader for the records management code writes with msgpackr
//! (`useRecords: false`: plain maps with string keys). Zero-copy: strings borrow the
//! LMDB value. Only what the records use is supported: nil, bool, ints, floats, str,
//! bin (skipped), arrays and maps; anything else is a decode error.

#[derive(Debug, PartialEq)]
pub struct DecodeError(pub &'static str);

pub type Result<T> = std::result::Result<T, DecodeError>;

#[derive(Debug, PartialEq, Clone, Copy)]
pub enum Value<'a> {
    Nil,
    Bool(bool),
    Int(i64),
    Float(f64),
    /// A string's bytes; validated as UTF-8 only when read with `as_str`.
    Str(&'a [u8]),
    /// An array or a map: its element count and the bytes that hold the elements.
    Array(usize, Reader<'a>),
    Map(usize, Reader<'a>),
}

impl<'a> Value<'a> {
    pub fn as_str(&self) -> Option<&'a str> {
        match self {
            Value::Str(s) => std::str::from_utf8(s).ok(),
            _ => None,
        }
    }

    /// Whole numbers, whichever way they were encoded (msgpackr writes large ones as float64).
    pub fn as_i64(&self) -> Option<i64> {
        match *self {
            Value::Int(i) => Some(i),
            Value::Float(f) if f.fract() == 0.0 && f.abs() < 9.3e18 => Some(f as i64),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }
}

#[derive(Debug, PartialEq, Clone, Copy)]
pub struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub fn new(bytes: &'a [u8]) -> Reader<'a> {
        Reader { bytes, pos: 0 }
    }

    /// The top-level value of a record. A container is returned without walking it first
    /// (`next` walks one to find its end): its elements are decoded once, as the caller
    /// iterates them, and a truncated record fails then.
    pub fn top(bytes: &'a [u8]) -> Result<Value<'a>> {
        let mut r = Reader::new(bytes);
        let tag = r.byte()?;
        let (n, map) = match tag {
            0x90..=0x9f => (usize::from(tag & 0x0f), false),
            0x80..=0x8f => (usize::from(tag & 0x0f), true),
            0xdc | 0xde => (r.be(2)? as usize, tag == 0xde),
            0xdd | 0xdf => (r.be(4)? as usize, tag == 0xdf),
            _ => return Reader::new(bytes).next(),
        };
        let inner = Reader { bytes: &bytes[r.pos..], pos: 0 };
        Ok(if map { Value::Map(n, inner) } else { Value::Array(n, inner) })
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let end = self.pos.checked_add(n).ok_or(DecodeError("length overflow"))?;
        let out = self.bytes.get(self.pos..end).ok_or(DecodeError("truncated"))?;
        self.pos = end;
        Ok(out)
    }

    fn byte(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }

    fn be(&mut self, n: usize) -> Result<u64> {
        Ok(self.take(n)?.iter().fold(0u64, |acc, b| (acc << 8) | u64::from(*b)))
    }

    fn str(&mut self, n: usize) -> Result<Value<'a>> {
        Ok(Value::Str(self.take(n)?))
    }

    /// Reads one value; for arrays and maps, returns a reader over their elements and skips
    /// past them.
    pub fn next(&mut self) -> Result<Value<'a>> {
        let tag = self.byte()?;
        Ok(match tag {
            0x00..=0x7f => Value::Int(i64::from(tag)),
            0xe0..=0xff => Value::Int(i64::from(tag as i8)),
            0xa0..=0xbf => return self.str(usize::from(tag & 0x1f)),
            0x90..=0x9f => return self.container(usize::from(tag & 0x0f), false),
            0x80..=0x8f => return self.container(usize::from(tag & 0x0f), true),
            0xc0 => Value::Nil,
            0xc2 => Value::Bool(false),
            0xc3 => Value::Bool(true),
            0xc4..=0xc6 => {
                let n = self.be(1 << (tag - 0xc4))? as usize;
                self.take(n)?;
                Value::Nil
            }
            0xca => Value::Float(f64::from(f32::from_bits(self.be(4)? as u32))),
            0xcb => Value::Float(f64::from_bits(self.be(8)?)),
            0xcc..=0xcf => {
                let v = self.be(1 << (tag - 0xcc))?;
                Value::Int(i64::try_from(v).map_err(|_| DecodeError("uint64 out of range"))?)
            }
            0xd0 => Value::Int(i64::from(self.be(1)? as u8 as i8)),
            0xd1 => Value::Int(i64::from(self.be(2)? as u16 as i16)),
            0xd2 => Value::Int(i64::from(self.be(4)? as u32 as i32)),
            0xd3 => Value::Int(self.be(8)? as i64),
            0xd9..=0xdb => {
                let n = self.be(1 << (tag - 0xd9))? as usize;
                return self.str(n);
            }
            0xdc | 0xdd => {
                let n = self.be(if tag == 0xdc { 2 } else { 4 })? as usize;
                return self.container(n, false);
            }
            0xde | 0xdf => {
                let n = self.be(if tag == 0xde { 2 } else { 4 })? as usize;
                return self.container(n, true);
            }
            _ => return Err(DecodeError("unsupported msgpack type")),
        })
    }

    /// A map key: a msgpack string's bytes, unvalidated.
    fn key(&mut self) -> Result<&'a [u8]> {
        let tag = self.byte()?;
        let n = match tag {
            0xa0..=0xbf => usize::from(tag & 0x1f),
            0xd9..=0xdb => self.be(1 << (tag - 0xd9))? as usize,
            _ => return Err(DecodeError("map key is not a string")),
        };
        self.take(n)
    }

    fn container(&mut self, n: usize, map: bool) -> Result<Value<'a>> {
        let start = self.pos;
        let items = if map { n.checked_mul(2).ok_or(DecodeError("length overflow"))? } else { n };
        for _ in 0..items {
            self.next()?;
        }
        let inner = Reader { bytes: &self.bytes[start..self.pos], pos: 0 };
        Ok(if map { Value::Map(n, inner) } else { Value::Array(n, inner) })
    }
}

/// Iterates the (key, value) pairs of a map whose keys are strings. Keys are returned as
/// raw bytes (compared against known field names, so they need no UTF-8 check).
pub fn map_entries<'a>(value: Value<'a>) -> Result<impl Iterator<Item = Result<(&'a [u8], Value<'a>)>>> {
    let Value::Map(n, mut r) = value else { return Err(DecodeError("expected a map")) };
    Ok((0..n).map(move |_| {
        let key = r.key()?;
        Ok((key, r.next()?))
    }))
}

/// Iterates the elements of an array.
pub fn array_items<'a>(value: Value<'a>) -> Result<impl Iterator<Item = Result<Value<'a>>>> {
    let Value::Array(n, mut r) = value else { return Err(DecodeError("expected an array")) };
    Ok((0..n).map(move |_| r.next()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_scalars_and_containers() {
        // {"a": 1, "b": [true, nil, "xy"], "c": -2, "d": 1.5, "e": 4294967296}
        let bytes = [
            0x85, 0xa1, b'a', 0x01, 0xa1, b'b', 0x93, 0xc3, 0xc0, 0xa2, b'x', b'y', 0xa1, b'c', 0xfe, 0xa1, b'd', 0xcb, 0x3f,
            0xf8, 0, 0, 0, 0, 0, 0, 0xa1, b'e', 0xcf, 0, 0, 0, 1, 0, 0, 0, 0,
        ];
        let root = Reader::new(&bytes).next().unwrap();
        let entries: Vec<_> = map_entries(root).unwrap().map(|e| e.unwrap()).collect();
        assert_eq!(entries[0], (&b"a"[..], Value::Int(1)));
        let items: Vec<_> = array_items(entries[1].1).unwrap().map(|v| v.unwrap()).collect();
        assert_eq!(items, vec![Value::Bool(true), Value::Nil, Value::Str(b"xy")]);
        assert_eq!(items[2].as_str(), Some("xy"));
        assert_eq!(entries[2].1.as_i64(), Some(-2));
        assert_eq!(entries[3].1, Value::Float(1.5));
        assert_eq!(entries[4].1.as_i64(), Some(4_294_967_296));
    }

    #[test]
    fn top_reads_a_record_lazily_and_still_fails_on_truncation() {
        let bytes = [0x82, 0xa1, b'a', 0x01, 0xa1, b'b', 0x92, 0xc3, 0xc0];
        let top = Reader::top(&bytes).unwrap();
        assert!(matches!(top, Value::Map(2, _)));
        let entries: Vec<_> = map_entries(top).unwrap().map(|e| e.unwrap()).collect();
        assert_eq!(entries[0], (&b"a"[..], Value::Int(1)));
        assert_eq!(array_items(entries[1].1).unwrap().count(), 2);
        let truncated = Reader::top(&bytes[..7]).unwrap();
        assert!(map_entries(truncated).unwrap().any(|e| e.is_err()));
        assert_eq!(Reader::top(&[0xa1, b'x']).unwrap().as_str(), Some("x"));
        assert!(Reader::top(&[]).is_err());
    }

    #[test]
    fn rejects_truncated_input() {
        assert!(Reader::new(&[0x92, 0x01]).next().is_err());
        assert!(Reader::new(&[0xd9, 5, b'a']).next().is_err());
        assert_eq!(Reader::new(&[0xa1, 0xff]).next().unwrap().as_str(), None);
        assert!(Reader::new(&[]).next().is_err());
    }
}
