//! SHA-256 helpers. Key material is stored and looked up by `sha256_base64(key)`, so these
//! bytes must equal node:crypto's `createHash('sha256').update(x).digest('base64')`
//! (standard alphabet, `=` padding); test/engine/store.test.ts checks that across the boundary.

use sha2::{Digest, Sha256};

/// Length of the standard padded base64 encoding of a 32-byte digest.
pub const SHA256_BASE64_LEN: usize = 44;

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

pub fn sha256(data: &[u8]) -> [u8; 32] {
    Sha256::digest(data).into()
}

/// SHA-256 of the concatenation of `parts` (without building it).
pub fn sha256_parts(parts: &[&[u8]]) -> [u8; 32] {
    let mut h = Sha256::new();
    for part in parts {
        h.update(part);
    }
    h.finalize().into()
}

/// SHA-256 of `data` as standard padded base64 (always 44 ASCII bytes), without allocating.
pub fn sha256_base64(data: &[u8]) -> [u8; SHA256_BASE64_LEN] {
    let mut out = [0u8; SHA256_BASE64_LEN];
    base64_encode(&sha256(data), &mut out);
    out
}

/// Standard padded base64 of `input` into `out`; returns the number of bytes written.
/// `out` must hold at least `4 * ceil(input.len() / 3)` bytes.
pub fn base64_encode(input: &[u8], out: &mut [u8]) -> usize {
    let mut n = 0;
    for chunk in input.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let v = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        out[n] = ALPHABET[(v >> 18) as usize & 63];
        out[n + 1] = ALPHABET[(v >> 12) as usize & 63];
        out[n + 2] = if chunk.len() > 1 {
            ALPHABET[(v >> 6) as usize & 63]
        } else {
            b'='
        };
        out[n + 3] = if chunk.len() > 2 {
            ALPHABET[v as usize & 63]
        } else {
            b'='
        };
        n += 4;
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b64(input: &[u8]) -> String {
        let mut out = vec![0u8; input.len().div_ceil(3) * 4];
        let n = base64_encode(input, &mut out);
        String::from_utf8(out[..n].to_vec()).unwrap()
    }

    #[test]
    fn base64_matches_rfc4648_vectors() {
        assert_eq!(b64(b""), "");
        assert_eq!(b64(b"f"), "Zg==");
        assert_eq!(b64(b"fo"), "Zm8=");
        assert_eq!(b64(b"foo"), "Zm9v");
        assert_eq!(b64(b"foob"), "Zm9vYg==");
        assert_eq!(b64(b"fooba"), "Zm9vYmE=");
        assert_eq!(b64(b"foobar"), "Zm9vYmFy");
        assert_eq!(b64(&[0xfb, 0xff]), "+/8=");
    }

    #[test]
    fn sha256_base64_matches_known_digests() {
        assert_eq!(
            &sha256_base64(b""),
            b"47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="
        );
        assert_eq!(
            &sha256_base64(b"abc"),
            b"ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0="
        );
    }
}
