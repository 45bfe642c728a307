//! Global allocators for tests: [`Counting`] counts allocations, for tests
//! that prove a path allocates nothing; [`Live`] counts the heap bytes
//! live, for tests that hold a memory figure exactly.
//!
//! This module only defines the types: a test binary that measures installs
//! one itself, so that no other binary linking this crate pays for the
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
use std::sync::atomic::{AtomicIsize, AtomicU64, Ordering::Relaxed};

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

/// Forwards to the system allocator and keeps the count of bytes live.
pub struct Live;

static LIVE: AtomicIsize = AtomicIsize::new(0);

/// Heap bytes allocated and not yet freed so far, process-wide; always 0
/// unless [`Live`] is the global allocator.
pub fn live_bytes() -> isize {
    LIVE.load(Relaxed)
}

// SAFETY: forwards to the system allocator unchanged; only counts bytes.
unsafe impl GlobalAlloc for Live {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Relaxed);
        // SAFETY: same contract as ours.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Relaxed);
        // SAFETY: same contract as ours.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(new_size as isize - layout.size() as isize, Relaxed);
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
