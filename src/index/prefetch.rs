//! Software prefetch: the scorer knows which scattered documents it will
//! touch a few steps ahead (the next postings, the next candidates), which
//! the hardware prefetcher cannot guess; asking for their cache lines early
//! lets the misses overlap instead of stalling one after another.

/// Asks the CPU to start loading the cache line of `slice[i]` (nothing when
/// `i` is out of bounds, or on targets without a stable prefetch).
#[inline]
pub fn prefetch<T>(slice: &[T], i: usize) {
    #[cfg(target_arch = "x86_64")]
    if i < slice.len() {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        let p = slice.as_ptr().wrapping_add(i).cast::<i8>();
        // SAFETY: a prefetch is only a hint: it never faults or changes
        // memory, whatever the address (this one is in bounds anyway). SSE
        // is part of x86_64.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(p) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (slice, i);
}
