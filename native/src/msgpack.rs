//! A minimal, streaming MessagePack reader for the records management code writes with
//! msgpackr (`useRecords: false`: plain maps with string keys). One pass, zero-copy: strings
//! are returned as the record's bytes, unvalidated (they are copied into replies, compared
//! byte-wise, or parsed; the reply becomes a JS string through V8's UTF-8 decoder). Only
//! what the records use is supported: nil, bool, ints, floats, str, bin, arrays and maps;
//! anything else is a decode error. Callers read a map's entries in order and `skip`
//! the values they do not need.

#[derive(Debug, PartialEq)]
pub struct DecodeError(pub &'static str);

pub type Result<T> = std::result::Result<T, DecodeError>;

pub struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub fn new(bytes: &'a [u8]) -> Reader<'a> {
        Reader { bytes, pos: 0 }
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let end = self.pos.checked_add(n).ok_or(DecodeError("length overflow"))?;
        let out = self.bytes.get(self.pos..end).ok_or(DecodeError("truncated"))?;
        self.pos = end;
        Ok(out)
    }

    fn byte(&mut self) -> Result<u8> {
        let b = *self.bytes.get(self.pos).ok_or(DecodeError("truncated"))?;
        self.pos += 1;
        Ok(b)
    }

    fn peek(&self) -> Result<u8> {
        self.bytes.get(self.pos).copied().ok_or(DecodeError("truncated"))
    }

    fn be(&mut self, n: usize) -> Result<u64> {
        Ok(self.take(n)?.iter().fold(0u64, |acc, b| (acc << 8) | u64::from(*b)))
    }

    /// The entry count of a map (the reader moves to its first key).
    pub fn map_len(&mut self) -> Result<usize> {
        match self.byte()? {
            tag @ 0x80..=0x8f => Ok(usize::from(tag & 0x0f)),
            0xde => Ok(self.be(2)? as usize),
            0xdf => Ok(self.be(4)? as usize),
            _ => Err(DecodeError("expected a map")),
        }
    }

    /// The element count of an array (the reader moves to its first element).
    pub fn array_len(&mut self) -> Result<usize> {
        match self.byte()? {
            tag @ 0x90..=0x9f => Ok(usize::from(tag & 0x0f)),
            0xdc => Ok(self.be(2)? as usize),
            0xdd => Ok(self.be(4)? as usize),
            _ => Err(DecodeError("expected an array")),
        }
    }

    /// A string's bytes (map keys included).
    pub fn str(&mut self) -> Result<&'a [u8]> {
        let n = match self.byte()? {
            tag @ 0xa0..=0xbf => usize::from(tag & 0x1f),
            tag @ 0xd9..=0xdb => self.be(1 << (tag - 0xd9))? as usize,
            _ => return Err(DecodeError("expected a string")),
        };
        self.take(n)
    }

    /// A string, or None for nil.
    pub fn str_or_nil(&mut self) -> Result<Option<&'a [u8]>> {
        if self.peek()? == 0xc0 {
            self.pos += 1;
            return Ok(None);
        }
        self.str().map(Some)
    }

    /// A whole number, however it was encoded (msgpackr writes large ones as float64), or
    /// None for nil.
    pub fn int_or_nil(&mut self) -> Result<Option<i64>> {
        let tag = self.byte()?;
        Ok(Some(match tag {
            0x00..=0x7f => i64::from(tag),
            0xe0..=0xff => i64::from(tag as i8),
            0xc0 => return Ok(None),
            0xcc..=0xcf => i64::try_from(self.be(1 << (tag - 0xcc))?).map_err(|_| DecodeError("uint64 out of range"))?,
            0xd0 => i64::from(self.be(1)? as u8 as i8),
            0xd1 => i64::from(self.be(2)? as u16 as i16),
            0xd2 => i64::from(self.be(4)? as u32 as i32),
            0xd3 => self.be(8)? as i64,
            0xca | 0xcb => {
                let f = if tag == 0xca { f64::from(f32::from_bits(self.be(4)? as u32)) } else { f64::from_bits(self.be(8)?) };
                if f.fract() != 0.0 || f.abs() >= 9.3e18 {
                    return Err(DecodeError("expected an integer"));
                }
                f as i64
            }
            _ => return Err(DecodeError("expected an integer")),
        }))
    }

    pub fn int(&mut self) -> Result<i64> {
        self.int_or_nil()?.ok_or(DecodeError("expected an integer"))
    }

    /// true/false; any other value counts as false (and is skipped).
    pub fn bool(&mut self) -> Result<bool> {
        match self.peek()? {
            0xc3 => {
                self.pos += 1;
                Ok(true)
            }
            _ => self.skip().map(|()| false),
        }
    }

    /// Whether the next value is nil (it is consumed either way).
    pub fn is_nil(&mut self) -> Result<bool> {
        let nil = self.peek()? == 0xc0;
        self.skip()?;
        Ok(nil)
    }

    /// Skips one value of any supported type, containers included.
    pub fn skip(&mut self) -> Result<()> {
        // Values still to skip: containers add their elements (a map two per entry).
        let mut pending: usize = 1;
        while pending > 0 {
            pending -= 1;
            let tag = self.byte()?;
            let (skip_bytes, more) = match tag {
                0x00..=0x7f | 0xe0..=0xff | 0xc0 | 0xc2 | 0xc3 => (0, 0),
                0xa0..=0xbf => (usize::from(tag & 0x1f), 0),
                0x90..=0x9f => (0, usize::from(tag & 0x0f)),
                0x80..=0x8f => (0, 2 * usize::from(tag & 0x0f)),
                0xc4..=0xc6 => (self.be(1 << (tag - 0xc4))? as usize, 0),
                0xd9..=0xdb => (self.be(1 << (tag - 0xd9))? as usize, 0),
                0xca => (4, 0),
                0xcb => (8, 0),
                0xcc..=0xcf => (1 << (tag - 0xcc), 0),
                0xd0..=0xd3 => (1 << (tag - 0xd0), 0),
                0xdc => (0, self.be(2)? as usize),
                0xdd => (0, self.be(4)? as usize),
                0xde => (0, 2 * self.be(2)? as usize),
                0xdf => (0, (self.be(4)? as usize).checked_mul(2).ok_or(DecodeError("length overflow"))?),
                _ => return Err(DecodeError("unsupported msgpack type")),
            };
            self.take(skip_bytes)?;
            // A container cannot hold more elements than it has bytes left.
            if more > self.bytes.len() - self.pos {
                return Err(DecodeError("truncated"));
            }
            pending += more;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_scalars_and_containers_in_one_pass() {
        // {"a": 1, "b": [true, nil, "xy"], "c": -2, "d": 1.5, "e": 4294967296, "f": 3.0}
        let bytes = [
            0x86, 0xa1, b'a', 0x01, 0xa1, b'b', 0x93, 0xc3, 0xc0, 0xa2, b'x', b'y', 0xa1, b'c', 0xfe, 0xa1, b'd', 0xcb, 0x3f,
            0xf8, 0, 0, 0, 0, 0, 0, 0xa1, b'e', 0xcf, 0, 0, 0, 1, 0, 0, 0, 0, 0xa1, b'f', 0xcb, 0x40, 0x08, 0, 0, 0, 0, 0, 0,
        ];
        let mut r = Reader::new(&bytes);
        assert_eq!(r.map_len(), Ok(6));
        assert_eq!(r.str(), Ok(&b"a"[..]));
        assert_eq!(r.int(), Ok(1));
        assert_eq!(r.str(), Ok(&b"b"[..]));
        assert_eq!(r.array_len(), Ok(3));
        assert_eq!(r.bool(), Ok(true));
        assert_eq!(r.str_or_nil(), Ok(None));
        assert_eq!(r.str(), Ok(&b"xy"[..]));
        assert_eq!(r.str(), Ok(&b"c"[..]));
        assert_eq!(r.int(), Ok(-2));
        assert_eq!(r.str(), Ok(&b"d"[..]));
        assert!(r.int().is_err(), "1.5 is not an integer");
        assert_eq!(r.str(), Ok(&b"e"[..]));
        assert_eq!(r.int(), Ok(4_294_967_296));
        assert_eq!(r.str(), Ok(&b"f"[..]));
        assert_eq!(r.int(), Ok(3), "msgpackr writes some whole numbers as float64");
    }

    #[test]
    fn skips_nested_values() {
        // {"x": {"y": [1, {"z": "w"}], "bin": <2 bytes>}, "after": 7}
        let bytes = [
            0x82, 0xa1, b'x', 0x82, 0xa1, b'y', 0x92, 0x01, 0x81, 0xa1, b'z', 0xa1, b'w', 0xa3, b'b', b'i', b'n', 0xc4, 2, 9, 9,
            0xa5, b'a', b'f', b't', b'e', b'r', 0x07,
        ];
        let mut r = Reader::new(&bytes);
        assert_eq!(r.map_len(), Ok(2));
        assert_eq!(r.str(), Ok(&b"x"[..]));
        r.skip().unwrap();
        assert_eq!(r.str(), Ok(&b"after"[..]));
        assert_eq!(r.int(), Ok(7));
    }

    #[test]
    fn rejects_truncated_and_unsupported_input() {
        assert!(Reader::new(&[0x92, 0x01]).skip().is_err());
        assert!(Reader::new(&[0xd9, 5, b'a']).str().is_err());
        assert!(Reader::new(&[]).map_len().is_err());
        assert!(Reader::new(&[0xdd, 0xff, 0xff, 0xff, 0xff]).skip().is_err(), "a huge count without the bytes");
        assert!(Reader::new(&[0xc1]).skip().is_err());
        assert_eq!(Reader::new(&[0xa1, 0xff]).str(), Ok(&[0xff][..]), "bytes are not validated here");
    }
}
