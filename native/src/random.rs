//! Cryptographically secure random bytes for ids and key material: the kernel's CSPRNG
//! through /dev/urandom, opened once per process (a read is one system call, several times
//! cheaper than node:crypto's randomFillSync for the few bytes an id needs).

use std::fs::File;
use std::io::{self, Read};
use std::sync::OnceLock;

static URANDOM: OnceLock<io::Result<File>> = OnceLock::new();

/// Fills `out` with random bytes, or fails (never a weaker source).
pub fn fill(out: &mut [u8]) -> io::Result<()> {
    match URANDOM.get_or_init(|| File::open("/dev/urandom")) {
        Ok(file) => (&*file).read_exact(out),
        Err(e) => Err(io::Error::new(e.kind(), format!("/dev/urandom: {e}"))),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn fills_with_bytes_that_differ() {
        let (mut a, mut b) = ([0u8; 32], [0u8; 32]);
        super::fill(&mut a).unwrap();
        super::fill(&mut b).unwrap();
        assert_ne!(a, b);
        assert!(a.iter().any(|&x| x != 0));
    }
}
