//! Slabs: the bottom tier, where a size class gets its memory.
//!
//! Algorithm: a bump allocator over large, cache-line-aligned chunks of
//! system memory. Each slab is one `std::alloc` allocation laid out as
//!
//! ```text
//! [ header: 64 bytes | block 0 | block 1 | ... | block n-1 ]
//! ```
//!
//! The header holds the address of the previously allocated slab, so every
//! slab a carver ever made stays reachable from it (a chain). Blocks are
//! handed out once, front to back, and never come back here: a freed block
//! lives on in a magazine. Slabs are returned to the system only when the
//! carver itself is dropped, which the global pools never are (they are
//! kept for the process lifetime and reclaimed by the OS at exit).
//!
//! Invariants:
//! * `cursor` points `remaining` whole blocks before the end of the newest
//!   slab, or is dangling with `remaining == 0`;
//! * every block is `SLAB_ALIGN`-aligned: the slab is, the header is one
//!   alignment unit long, and `block_size` is a multiple of it;
//! * every block address handed out is distinct and lies inside one slab of
//!   the chain.

use std::alloc::{self, Layout};
use std::ptr::{self, NonNull};

/// Alignment of slabs and of every block: one cache line, so that two
/// blocks never share a line (no false sharing between messages).
pub(crate) const SLAB_ALIGN: usize = 64;

/// Bump allocator over a chain of slabs for one block size.
#[derive(Debug)]
pub(crate) struct SlabCarver {
    block_size: usize,
    blocks_per_slab: usize,
    /// Next block to hand out in the newest slab.
    cursor: NonNull<u8>,
    /// Blocks left after `cursor` (inclusive) in the newest slab.
    remaining: usize,
    /// Newest slab, or `None`; each header links to the one before.
    newest: Option<NonNull<u8>>,
    slabs: usize,
    carved: usize,
}

// SAFETY: the carver owns its slabs outright (no other handle to them
// exists except blocks it already gave away, which it never touches
// again), so moving it to another thread moves plain ownership of memory.
unsafe impl Send for SlabCarver {}

impl SlabCarver {
    /// A carver with no slab yet. `block_size` must be a non-zero multiple
    /// of [`SLAB_ALIGN`]; `blocks_per_slab` must be non-zero.
    pub(crate) fn new(block_size: usize, blocks_per_slab: usize) -> Self {
        assert!(block_size > 0 && block_size & (SLAB_ALIGN - 1) == 0);
        assert!(blocks_per_slab > 0);
        SlabCarver {
            block_size,
            blocks_per_slab,
            cursor: NonNull::dangling(),
            remaining: 0,
            newest: None,
            slabs: 0,
            carved: 0,
        }
    }

    fn layout(&self) -> Layout {
        let bytes = self
            .block_size
            .checked_mul(self.blocks_per_slab)
            .and_then(|b| b.checked_add(SLAB_ALIGN))
            .expect("slab size overflows usize");
        Layout::from_size_align(bytes, SLAB_ALIGN).expect("slab layout")
    }

    /// Bytes one slab takes from the system.
    pub(crate) fn slab_bytes(&self) -> usize {
        self.layout().size()
    }

    /// Slabs allocated so far.
    pub(crate) fn slabs(&self) -> usize {
        self.slabs
    }

    /// Blocks handed out so far.
    pub(crate) fn carved(&self) -> usize {
        self.carved
    }

    /// Hands out a fresh block, allocating a new slab when the newest one is
    /// used up. The block is `block_size` bytes, `SLAB_ALIGN`-aligned, and
    /// never handed out again.
    pub(crate) fn carve(&mut self) -> NonNull<u8> {
        if self.remaining == 0 {
            self.grow();
        }
        let block = self.cursor;
        self.remaining -= 1;
        self.carved += 1;
        if self.remaining > 0 {
            // SAFETY: `remaining > 0` whole blocks follow `block` inside the
            // newest slab (cursor invariant), so one block further is still
            // in bounds of that allocation.
            self.cursor = unsafe { block.add(self.block_size) };
        }
        block
    }

    #[cold]
    fn grow(&mut self) {
        let layout = self.layout();
        // SAFETY: the layout has a non-zero size (at least SLAB_ALIGN).
        let raw = unsafe { alloc::alloc(layout) };
        let Some(slab) = NonNull::new(raw) else {
            alloc::handle_alloc_error(layout)
        };
        let link = self.newest.map_or(ptr::null_mut(), NonNull::as_ptr);
        // SAFETY: the slab is freshly allocated, SLAB_ALIGN-aligned (enough
        // for a pointer) and at least SLAB_ALIGN bytes long: the header.
        unsafe { slab.cast::<*mut u8>().as_ptr().write(link) };
        self.newest = Some(slab);
        // SAFETY: the first block starts right after the one-line header,
        // inside the allocation (it holds at least one block).
        self.cursor = unsafe { slab.add(SLAB_ALIGN) };
        self.remaining = self.blocks_per_slab;
        self.slabs += 1;
    }
}

impl Drop for SlabCarver {
    /// Frees every slab. Whoever owns the carver guarantees that no block it
    /// handed out is used afterwards (the global pools are never dropped).
    fn drop(&mut self) {
        let layout = self.layout();
        let mut next = self.newest.take();
        while let Some(slab) = next {
            // SAFETY: `slab` heads a slab of the chain; its header was
            // written in `grow` and holds the previous slab or null.
            let link = unsafe { slab.cast::<*mut u8>().as_ptr().read() };
            next = NonNull::new(link);
            // SAFETY: `slab` came from `alloc::alloc(layout)` with this same
            // layout (block size and count never change) and is freed once:
            // it is unlinked from the chain before the next iteration.
            unsafe { alloc::dealloc(slab.as_ptr(), layout) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pool_slab_blocks_are_aligned_distinct_and_chained() {
        let mut carver = SlabCarver::new(128, 3);
        let blocks: Vec<_> = (0..7).map(|_| carver.carve()).collect();
        assert_eq!(carver.slabs(), 3);
        assert_eq!(carver.carved(), 7);
        assert_eq!(carver.slab_bytes(), 64 + 3 * 128);
        let mut addrs: Vec<usize> = blocks.iter().map(|b| b.as_ptr() as usize).collect();
        assert!(addrs.iter().all(|a| a % SLAB_ALIGN == 0));
        addrs.sort_unstable();
        addrs.dedup();
        assert_eq!(addrs.len(), 7);
        for b in &blocks {
            // SAFETY: each block is 128 writable bytes owned by this test.
            unsafe { b.as_ptr().write_bytes(0xA5, 128) };
        }
    }
}
