//! A global allocator that counts allocations, for tests that prove a path
//! allocates nothing.
//!
//! This module only defines the type: a test binary that measures installs
//! it itself, so that no other binary linking this crate pays for the
//! count:
//!
//! ```
//! use kaspar_suite::alloc::{allocations, Counting};
//!
//! #[global_allocator]
//! static GLOBAL: Counting = Counting;
//!
//! fn main() {
//!     let before = allocations();
//!     let boxed = std::hint::black_box(Box::new(7u64));
//!     assert_eq!(allocations() - before, 1);
//!     drop(boxed);
//! }
//! ```
//!
//! Keep one test function per such binary: the count is process-wide, and
//! another test running at the same time would allocate into it.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Forwards to the system allocator and counts `alloc` and `realloc` calls.
pub struct Counting;

static ALLOCS: AtomicU64 = AtomicU64::new(0);

/// Allocations (and reallocations) so far, process-wide; always 0 unless
/// [`Counting`] is the global allocator.
pub fn allocations() -> u64 {
    ALLOCS.load(Relaxed)
}

// SAFETY: forwards to the system allocator unchanged; only counts calls.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Relaxed);
        // SAFETY: same contract as ours.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as ours.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Relaxed);
        // SAFETY: same contract as ours.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// Parks the calling thread once, briefly, through parking_lot.
///
/// parking_lot allocates a thread's parking record the first time that
/// thread parks, and grows its global table as the number of such threads
/// grows. A thread that first parks inside a measured window (say, on a
/// mutex that happens to be contended there) allocates then, and a test
/// that counts allocations fails for a reason unrelated to what it
/// measures. Call this on every thread that may block in the window,
/// before the window opens.
pub fn warm_parking() {
    let (lock, ready) = (parking_lot::Mutex::new(()), parking_lot::Condvar::new());
    ready.wait_for(&mut lock.lock(), std::time::Duration::from_micros(1));
}
