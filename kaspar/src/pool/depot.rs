//! The depot: the middle tier, shared by every thread for one size class.
//!
//! Algorithm: the depot layer of Bonwick and Adams' magazine allocator. One
//! short lock guards two stacks of whole magazines, `full` (non-empty ones)
//! and `empty`, plus the size class's slab carver. Threads only ever trade
//! whole magazines with it:
//!
//! * [`refill`](Depot::refill): an empty magazine in, a non-empty one out
//!   (carved fresh from the slabs when no full one is waiting);
//! * [`flush`](Depot::flush): a full magazine in, an empty one out;
//! * [`give_back`](Depot::give_back): a thread's magazines in, nothing out
//!   (thread exit).
//!
//! So a thread takes the lock once per magazine's worth of allocations or
//! frees, never once per block. The lock is held for a few pointer moves;
//! the only costly work under it, allocating a slab or a magazine, happens
//! while the pool is still growing (warm-up), never in steady state.
//!
//! The primitives come from `crate::base::sync`, so the loom model in
//! `tests/loom_pool.rs` checks this very code.
//!
//! Invariants (under the lock):
//! * every magazine in `full` holds at least one block, every one in
//!   `empty` holds none;
//! * `free_blocks` is the sum of the lengths of the magazines in `full`;
//! * a block is in at most one place: one magazine slot, one `Pooled`, or
//!   not yet carved.

use std::ptr::NonNull;

use super::magazine::{Magazine, MagazineList};
use super::slab::SlabCarver;
use crate::base::sync::Mutex;

/// The shared middle tier of one size class.
#[derive(Debug)]
pub struct Depot {
    block_size: usize,
    magazine_capacity: usize,
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    full: MagazineList,
    empty: MagazineList,
    free_blocks: usize,
    slabs: SlabCarver,
}

/// A snapshot of one depot's bookkeeping.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct DepotCounts {
    /// Slabs allocated from the system.
    pub slabs: usize,
    /// Bytes those slabs took from the system.
    pub slab_bytes: usize,
    /// Blocks ever carved from the slabs.
    pub carved: usize,
    /// Free blocks waiting in the depot's full magazines.
    pub free_blocks: usize,
    /// Magazines in the depot (full and empty).
    pub magazines: usize,
}

impl Depot {
    /// A depot for blocks of `block_size` bytes (a non-zero multiple of 64),
    /// trading magazines of `magazine_capacity` blocks and carving slabs of
    /// `blocks_per_slab` blocks.
    pub fn new(block_size: usize, magazine_capacity: usize, blocks_per_slab: usize) -> Self {
        // Check the capacity once here rather than on every magazine.
        drop(Magazine::new(magazine_capacity));
        Depot {
            block_size,
            magazine_capacity,
            state: Mutex::new(State {
                full: MagazineList::new(),
                empty: MagazineList::new(),
                free_blocks: 0,
                slabs: SlabCarver::new(block_size, blocks_per_slab),
            }),
        }
    }

    /// Bytes per block.
    pub fn block_size(&self) -> usize {
        self.block_size
    }

    /// Trades `spare` (an empty magazine, if the caller has one) for a
    /// magazine holding at least one block.
    pub fn refill(&self, spare: Option<Box<Magazine>>) -> Box<Magazine> {
        let mut st = self.state.lock();
        if let Some(spare) = spare {
            debug_assert!(spare.is_empty());
            st.empty.push(spare);
        }
        if let Some(mag) = st.full.pop() {
            st.free_blocks -= mag.len();
            return mag;
        }
        // Nothing free anywhere: the pool grows by one magazine of fresh
        // blocks (warm-up only; steady state finds a full magazine above).
        let mut mag = st
            .empty
            .pop()
            .unwrap_or_else(|| Magazine::new(self.magazine_capacity));
        while !mag.is_full() {
            let block = st.slabs.carve();
            if mag.push(block).is_err() {
                unreachable!("checked not full");
            }
        }
        mag
    }

    /// Trades `full` (a full magazine, if the caller has one) for an empty
    /// magazine.
    pub fn flush(&self, full: Option<Box<Magazine>>) -> Box<Magazine> {
        let spare = {
            let mut st = self.state.lock();
            if let Some(full) = full {
                st.push_nonempty(full);
            }
            st.empty.pop()
        };
        // A new magazine is a warm-up cost; allocate it outside the lock.
        spare.unwrap_or_else(|| Magazine::new(self.magazine_capacity))
    }

    /// Takes a magazine (of any fill) back for good, e.g. from an exiting
    /// thread.
    pub fn give_back(&self, mag: Box<Magazine>) {
        let mut st = self.state.lock();
        if mag.is_empty() {
            st.empty.push(mag);
        } else {
            st.push_nonempty(mag);
        }
    }

    /// One block, straight from the depot: for a thread whose cache is
    /// unavailable (being torn down, or already borrowed).
    pub fn alloc_one(&self) -> NonNull<u8> {
        let mut st = self.state.lock();
        let Some(head) = st.full.head_mut() else {
            return st.slabs.carve();
        };
        let block = head.pop().expect("magazines in `full` are non-empty");
        let now_empty = head.is_empty();
        st.free_blocks -= 1;
        if now_empty {
            let mag = st.full.pop().expect("head exists");
            st.empty.push(mag);
        }
        block
    }

    /// Returns one block straight to the depot (see [`alloc_one`]).
    ///
    /// [`alloc_one`]: Depot::alloc_one
    pub fn free_one(&self, block: NonNull<u8>) {
        let mut st = self.state.lock();
        let block = match st.full.head_mut().map(|m| m.push(block)) {
            Some(Ok(())) => {
                st.free_blocks += 1;
                return;
            }
            Some(Err(block)) => block,
            None => block,
        };
        let mut mag = st
            .empty
            .pop()
            .unwrap_or_else(|| Magazine::new(self.magazine_capacity));
        if mag.push(block).is_err() {
            unreachable!("an empty magazine has room");
        }
        st.push_nonempty(mag);
    }

    /// A snapshot of the counters.
    pub fn counts(&self) -> DepotCounts {
        let st = self.state.lock();
        DepotCounts {
            slabs: st.slabs.slabs(),
            slab_bytes: st.slabs.slabs() * st.slabs.slab_bytes(),
            carved: st.slabs.carved(),
            free_blocks: st.free_blocks,
            magazines: st.full.len() + st.empty.len(),
        }
    }

    /// Addresses of the free blocks in the depot, for tests that check no
    /// block is lost or duplicated.
    #[cfg(any(test, loom))]
    pub fn free_addresses(&self) -> Vec<usize> {
        let st = self.state.lock();
        let mut out = Vec::with_capacity(st.free_blocks);
        for mag in st.full.iter() {
            out.extend(mag.blocks().map(|b| b.as_ptr() as usize));
        }
        out
    }
}

impl State {
    fn push_nonempty(&mut self, mag: Box<Magazine>) {
        debug_assert!(!mag.is_empty());
        self.free_blocks += mag.len();
        self.full.push(mag);
    }
}
