//! Cryptographically secure random bytes for ids and key material: the kernel's CSPRNG
//! through /dev/urandom, opened once per process. Small draws are served from a per-thread
//! pool refilled 4 KiB at a time (a read of /dev/urandom is a system call of a few µs on this
//! kind of VM, and a createKey draws three times); each byte is handed out once and wiped
//! from the pool as it is. Draws larger than a quarter of the pool read the device directly.

use std::cell::RefCell;
use std::fs::File;
use std::io::{self, Read};
use std::sync::OnceLock;

static URANDOM: OnceLock<io::Result<File>> = OnceLock::new();

const POOL_BYTES: usize = 4096;

struct Pool {
    bytes: [u8; POOL_BYTES],
    /// Bytes before `used` were handed out (and are zero).
    used: usize,
}

thread_local! {
    static POOL: RefCell<Pool> = const { RefCell::new(Pool { bytes: [0; POOL_BYTES], used: POOL_BYTES }) };
}

fn read_device(out: &mut [u8]) -> io::Result<()> {
    match URANDOM.get_or_init(|| File::open("/dev/urandom")) {
        Ok(file) => (&*file).read_exact(out),
        Err(e) => Err(io::Error::new(e.kind(), format!("/dev/urandom: {e}"))),
    }
}

/// Fills `out` with random bytes, or fails (never a weaker source).
pub fn fill(out: &mut [u8]) -> io::Result<()> {
    if out.len() > POOL_BYTES / 4 {
        return read_device(out);
    }
    POOL.with(|pool| {
        let mut pool = pool.borrow_mut();
        if pool.used + out.len() > POOL_BYTES {
            read_device(&mut pool.bytes)?;
            pool.used = 0;
        }
        let (from, to) = (pool.used, pool.used + out.len());
        out.copy_from_slice(&pool.bytes[from..to]);
        pool.bytes[from..to].fill(0);
        pool.used = to;
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    #[test]
    fn fills_with_bytes_that_differ() {
        let (mut a, mut b) = ([0u8; 32], [0u8; 32]);
        super::fill(&mut a).unwrap();
        super::fill(&mut b).unwrap();
        assert_ne!(a, b);
        assert!(a.iter().any(|&x| x != 0));
    }

    #[test]
    fn never_hands_out_the_same_bytes_twice_across_refills() {
        let mut seen = HashSet::new();
        for i in 0..5_000 {
            let mut draw = vec![0u8; if i % 7 == 0 { 13 } else { 16 }];
            super::fill(&mut draw).unwrap();
            assert!(seen.insert(draw));
        }
        let mut big = vec![0u8; 2_000];
        super::fill(&mut big).unwrap();
        assert!(big.iter().any(|&x| x != 0));
    }
}
