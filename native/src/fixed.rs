//! Fixed-width records of little-endian i64 fields (the credits and window records).

/// The `N` fields of a record of exactly `N × 8` bytes, or None for any other length.
pub fn read_i64s<const N: usize>(bytes: &[u8]) -> Option<[i64; N]> {
    if bytes.len() != N * 8 {
        return None;
    }
    let mut out = [0i64; N];
    for (i, chunk) in bytes.chunks_exact(8).enumerate() {
        out[i] = i64::from_le_bytes(chunk.try_into().ok()?);
    }
    Some(out)
}

/// Writes the fields into `out` (which must be `fields.len() × 8` bytes).
pub fn write_i64s(fields: &[i64], out: &mut [u8]) {
    for (chunk, v) in out.chunks_exact_mut(8).zip(fields) {
        chunk.copy_from_slice(&v.to_le_bytes());
    }
}
