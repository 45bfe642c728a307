//! A hint that the calling thread is about to write a cache line.
//!
//! A queue whose consumer keeps up hands its producer memory the consumer
//! has just read: the `Compact` queue's drain gives the queue back the
//! buffer it emptied, so the slots the next pushes write sit in the other
//! core's cache. Each push's compare-and-swap waits for the stores before
//! it, so for that line to come over: a cross-core trip every two
//! messages of a `u64` actor's 32-byte envelope. Asking for the line a
//! few slots ahead, as the push before returns, overlaps that trip with
//! the producer's own work. On the 2-core dev VM a pooled actor's tell
//! stream went from 52-60 to 40 ns a message in a probe, and the peers
//! table's pooled tell from 0.81/0.78x crossbeam's time to 0.64/0.61x
//! (the pool chapter of the guide).
//!
//! A prefetch reads and writes nothing the program can see and never
//! faults, whatever the address: one past the end of a buffer only wastes
//! a line's fetch. Nothing is done under Miri (which runs no such
//! instruction) or off x86-64.

/// How far past the end of the slot just written the prefetch reaches:
/// two lines, about as far as a push gets ahead while a line crosses
/// between cores. On the dev VM, with 32-byte slots, 96 to 192 bytes past
/// the slot's start measured alike; 64 gained less.
pub(crate) const AHEAD: usize = 128;

/// Asks for the cache line at `at` (any address) in the calling core's
/// cache, ahead of a write to it.
#[cfg(all(target_arch = "x86_64", not(miri)))]
#[inline(always)]
pub(crate) fn line_for_write(at: *const u8) {
    use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
    // SAFETY: `_mm_prefetch` needs SSE, which every x86-64 CPU has; a
    // prefetch reads nothing the program sees and does not fault on any
    // address (module docs). `_MM_HINT_T0` rather than the write hint: on
    // a target without `prfchw` both compile to `prefetcht0`, and the dev
    // VM measured no difference between it and `prefetchw`.
    unsafe { _mm_prefetch::<_MM_HINT_T0>(at.cast()) }
}

/// A prefetch: nothing to do here.
#[cfg(not(all(target_arch = "x86_64", not(miri))))]
#[inline(always)]
pub(crate) fn line_for_write(_at: *const u8) {}
