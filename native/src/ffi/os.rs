//! The C library's calls the crate makes outside LMDB, as safe functions: a descriptor is
//! taken borrowed (so it is open for the call), a buffer as a slice, and the scheduling
//! calls act on the calling thread only.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};

use libc::{c_int, off_t};

/// Where the first `b` of `hay` is (the C library's memchr, many bytes at a time).
pub fn memchr(hay: &[u8], b: u8) -> Option<usize> {
    // SAFETY: memchr reads at most hay.len() bytes from its start, and returns null or a
    // pointer into them.
    let at = unsafe { libc::memchr(hay.as_ptr().cast(), c_int::from(b), hay.len()) };
    (!at.is_null()).then(|| at as usize - hay.as_ptr() as usize)
}

/// posix_fadvise: `advice` (`libc::POSIX_FADV_*`) for `len` bytes of the file from `offset`
/// (`len` 0: to its end). Advice only: false when the kernel declined it.
pub fn fadvise(fd: BorrowedFd<'_>, offset: off_t, len: off_t, advice: c_int) -> bool {
    // SAFETY: the descriptor is open for the call (borrowed); posix_fadvise touches no memory
    // of this process.
    unsafe { libc::posix_fadvise(fd.as_raw_fd(), offset, len, advice) == 0 }
}

/// fallocate (mode 0): disk blocks for `len` bytes from `offset`, extending the file when it
/// ends before them.
pub fn fallocate(fd: BorrowedFd<'_>, offset: off_t, len: off_t) -> io::Result<()> {
    // SAFETY: as in `fadvise`.
    if unsafe { libc::fallocate(fd.as_raw_fd(), 0, offset, len) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Whether a lock that another process holds on `len` bytes from `start` of the file
/// conflicts with a write lock there (fcntl F_GETLK: it only asks, and never reports this
/// process's own locks).
pub fn write_lock_conflicts(fd: BorrowedFd<'_>, start: off_t, len: off_t) -> bool {
    // SAFETY: an all-zero flock is a valid value; fcntl only fills it.
    let mut lock: libc::flock = unsafe { std::mem::zeroed() };
    lock.l_type = libc::F_WRLCK as libc::c_short;
    lock.l_whence = libc::SEEK_SET as libc::c_short;
    lock.l_start = start;
    lock.l_len = len;
    // SAFETY: the descriptor is open for the call (borrowed) and `lock` outlives it.
    let rc = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETLK, &mut lock) };
    rc == 0 && lock.l_type != libc::F_UNLCK as libc::c_short
}

/// Puts the calling thread at SCHED_BATCH and nice 19, the lowest priority a thread can set
/// without privileges. Best effort: left as it is where the system refuses.
pub fn lowest_priority_for_this_thread() {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: plain system calls on the calling thread (pid 0) with a valid parameter.
    unsafe {
        libc::sched_setscheduler(0, libc::SCHED_BATCH, &param);
        // Linux keeps nice per thread: PRIO_PROCESS with 0 is the calling thread.
        libc::setpriority(libc::PRIO_PROCESS, 0, 19);
    }
}

/// Puts thread `tid` of this process (0: the calling thread) at SCHED_IDLE: it runs only on
/// a CPU no thread of a normal policy wants, and leaves it as soon as one does. Lowering is
/// always allowed; whether the system took it.
pub fn idle_priority(tid: i64) -> bool {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: a plain system call with a valid parameter; a tid that is not ours fails.
    unsafe { libc::sched_setscheduler(tid as libc::pid_t, libc::SCHED_IDLE, &param) == 0 }
}

/// Puts thread `tid` (0: the calling thread) back at SCHED_OTHER, nice 0. Leaving SCHED_IDLE
/// or a higher nice needs a privilege (root, CAP_SYS_NICE or an RLIMIT_NICE of 20); whether
/// the system took both.
pub fn normal_priority(tid: i64) -> bool {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: plain system calls with a valid parameter; a tid that is not ours fails.
    unsafe {
        libc::sched_setscheduler(tid as libc::pid_t, libc::SCHED_OTHER, &param) == 0
            && libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, 0) == 0
    }
}

/// The scheduling policy (SCHED_OTHER, SCHED_IDLE, …) of thread `tid` (0: the calling thread).
#[cfg(test)]
pub fn policy_of(tid: i64) -> i32 {
    // SAFETY: a plain system call.
    unsafe { libc::sched_getscheduler(tid as libc::pid_t) }
}

/// The calling thread's id (gettid).
pub fn thread_id() -> i64 {
    // SAFETY: gettid has no arguments and cannot fail.
    i64::from(unsafe { libc::gettid() })
}

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

/// Raises this process's soft limit of open descriptors (RLIMIT_NOFILE) to its hard limit,
/// and returns the limits in force afterwards: (soft, hard). Best effort: when the system
/// refuses the raise, the limits stay as they were and are returned as they are.
pub fn raise_file_limit() -> io::Result<(u64, u64)> {
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit only fills `lim`, which outlives the call.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return Err(io::Error::last_os_error());
    }
    if lim.rlim_cur < lim.rlim_max {
        let raised = libc::rlimit { rlim_cur: lim.rlim_max, rlim_max: lim.rlim_max };
        // SAFETY: setrlimit only reads `raised`, which outlives the call.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
            lim = raised;
        }
    }
    Ok((lim.rlim_cur as u64, lim.rlim_max as u64))
}

#[cfg(test)]
mod tests {
    #[test]
    fn raise_file_limit_leaves_the_soft_limit_at_the_hard_one() {
        let (soft, hard) = super::raise_file_limit().unwrap();
        assert!(soft > 0);
        assert_eq!(soft, hard);
        assert_eq!(super::raise_file_limit().unwrap(), (soft, hard));
    }
}
