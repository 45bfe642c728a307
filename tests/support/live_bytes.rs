//! A global allocator that counts the heap bytes live: for the tests that
//! hold a memory figure exactly (`pool_sched_bytes`, `pool_idle_gives_back`).
//! A test binary installs it with
//! `#[global_allocator] static GLOBAL: live_bytes::Live = live_bytes::Live;`
//! and reads [`live`].

use std::alloc::{GlobalAlloc, Layout, System as Sys};
use std::sync::atomic::{AtomicIsize, Ordering::Relaxed};

/// Forwards to the system allocator and keeps the bytes live.
pub struct Live;

static LIVE: AtomicIsize = AtomicIsize::new(0);

/// Heap bytes allocated and not yet freed, process-wide.
pub fn live() -> isize {
    LIVE.load(Relaxed)
}

// SAFETY: forwards to the system allocator unchanged; only counts bytes.
unsafe impl GlobalAlloc for Live {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Relaxed);
        // SAFETY: same contract as ours.
        unsafe { Sys.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Relaxed);
        // SAFETY: same contract as ours.
        unsafe { Sys.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(new_size as isize - layout.size() as isize, Relaxed);
        // SAFETY: same contract as ours.
        unsafe { Sys.realloc(ptr, layout, new_size) }
    }
}
