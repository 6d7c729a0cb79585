//! The CPU's cache prefetch hint.

/// Starts reading the cache line holding `at` (a hint: it reads nothing the caller sees
/// and cannot fault).
#[inline]
pub fn prefetch_line<T>(at: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch of a valid address reads nothing and cannot fault.
    unsafe {
        std::arch::x86_64::_mm_prefetch((at as *const T).cast::<i8>(), std::arch::x86_64::_MM_HINT_T0);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = at;
}
