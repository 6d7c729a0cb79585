//! Request ids: one sequence per thread, drawn by JS (`requestId()`) and by the hot calls that
//! answer straight from the body bytes alike, so a request served either way gets an id
//! without JS building one. An id is `req_` + 8 random alphanumerics (drawn per thread, and
//! again every 36^8 ids) + a base-36 counter of 8 digits: unique within a thread's run,
//! unpredictable across runs.

use std::cell::Cell;

const ALPHABET: &[u8; 62] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
/// Ids per prefix: the counter's 8 base-36 digits.
const PER_PREFIX: u64 = 36u64.pow(8);

/// One request id, `req_` + 16 ASCII alphanumerics.
pub struct RequestId([u8; 20]);

impl RequestId {
    pub fn as_str(&self) -> &str {
        // Only ASCII is ever written into it.
        std::str::from_utf8(&self.0).unwrap_or("req_")
    }
}

/// (prefix, next counter value) of a sequence.
type State = ([u8; 8], u64);

thread_local! {
    /// Starts exhausted, so the first id draws this thread's prefix.
    static SEQUENCE: Cell<State> = const { Cell::new(([0; 8], PER_PREFIX)) };
}

/// The next id of this thread's sequence.
pub fn next() -> RequestId {
    SEQUENCE.with(|s| {
        let (state, id) = step(s.get(), random_prefix);
        s.set(state);
        id
    })
}

/// The id `state` gives and the state after it; `fresh` draws a new prefix when the counter
/// has run through its digits.
fn step(state: State, fresh: impl FnOnce() -> [u8; 8]) -> (State, RequestId) {
    let (prefix, n) = if state.1 >= PER_PREFIX { (fresh(), 0) } else { state };
    let mut id = *b"req_0000000000000000";
    id[4..12].copy_from_slice(&prefix);
    let mut rest = n;
    for at in (12..20).rev() {
        id[at] = DIGITS[(rest % 36) as usize];
        rest /= 36;
    }
    ((prefix, n + 1), RequestId(id))
}

fn random_prefix() -> [u8; 8] {
    let mut bytes = [0u8; 8];
    fill_random(&mut bytes);
    bytes.map(|b| ALPHABET[(b % 62) as usize])
}

/// The kernel's random bytes (getrandom, else /dev/urandom). Where neither answers, the
/// clock and this thread's stack address stand in: ids stay unique within the run, only
/// less unpredictable across runs.
fn fill_random(out: &mut [u8; 8]) {
    if crate::ffi::os::getrandom(out) {
        return;
    }
    use std::io::Read;
    if std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(out)).is_ok() {
        return;
    }
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
    *out = (nanos ^ (out.as_ptr() as u64).rotate_left(32)).to_le_bytes();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_count_up_in_base_36_under_one_prefix_and_a_new_prefix_follows_the_last_digit() {
        let prefix = *b"AbCd0123";
        let (state, first) = step((prefix, 0), || unreachable!());
        assert_eq!(first.as_str(), "req_AbCd012300000000");
        let (_, later) = step((prefix, 36 * 36 + 35), || unreachable!());
        assert_eq!(later.as_str(), "req_AbCd01230000010z");
        let (last_state, last) = step((prefix, PER_PREFIX - 1), || unreachable!());
        assert_eq!(last.as_str(), "req_AbCd0123zzzzzzzz");
        let (after, renewed) = step(last_state, || *b"ZZZZzzzz");
        assert_eq!(renewed.as_str(), "req_ZZZZzzzz00000000");
        assert_eq!((state, after), ((prefix, 1), (*b"ZZZZzzzz", 1)));
    }

    #[test]
    fn a_thread_draws_distinct_alphanumeric_ids() {
        let ids: Vec<String> = (0..1000).map(|_| next().as_str().to_string()).collect();
        assert!(ids.iter().all(|id| id.len() == 20 && id.starts_with("req_") && id[4..].bytes().all(|b| b.is_ascii_alphanumeric())));
        let mut unique = ids.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), ids.len());
        let other = std::thread::spawn(|| next().as_str().to_string()).join().unwrap();
        assert_ne!(other[4..12], ids[0][4..12], "another thread draws its own prefix");
    }
}
