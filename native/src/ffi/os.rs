//! The C library's calls the crate makes outside LMDB, as safe functions: a buffer is taken
//! as a slice.

use libc::c_int;

/// Fills `out` with the kernel's random bytes (getrandom, no flags); false when it did not
/// fill all of it.
pub fn getrandom(out: &mut [u8]) -> bool {
    // SAFETY: getrandom writes at most `out.len()` bytes into `out`.
    let n = unsafe { libc::getrandom(out.as_mut_ptr().cast(), out.len(), 0) };
    n == out.len() as isize
}

/// Ends the process at once with `code` (`_exit`): no destructors, no atexit handlers, no
/// flushing of buffered output.
pub fn exit_now(code: c_int) -> ! {
    // SAFETY: _exit ends the process; nothing of this process runs after it.
    unsafe { libc::_exit(code) }
}
