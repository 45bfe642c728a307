//! The blocks a `SegmentedMpsc` is made of, and the stack its spent blocks
//! wait on for reuse. The invariants named here (G4, G5) are stated in
//! the queue's header (`mod.rs`).

use std::mem::MaybeUninit;
use std::ptr;

use crossbeam_utils::CachePadded;

use crate::base::sync::{AtomicBool, AtomicPtr, AtomicUsize, Ordering, UnsafeCell};

/// Positions per lap: the slots of one block and its end marker. Small
/// under loom, so that models of a few messages cross blocks.
#[cfg(not(loom))]
pub(super) const LAP: usize = 32;
#[cfg(loom)]
pub(super) const LAP: usize = 4;
/// Messages per block.
pub(super) const BLOCK_CAP: usize = LAP - 1;

/// One message's room.
pub(super) struct Slot<T> {
    /// `p + 1` once the message of position `p` is written (G2).
    pub(super) stamp: AtomicUsize,
    pub(super) value: UnsafeCell<MaybeUninit<T>>,
}

/// `BLOCK_CAP` slots and the link to the next block.
pub(super) struct Block<T> {
    /// In the chain: the next lap's block, stored once by this block's
    /// installer, null until then. On the free stack: the next free block.
    pub(super) next: AtomicPtr<Block<T>>,
    pub(super) slots: [Slot<T>; BLOCK_CAP],
}

impl<T> Block<T> {
    /// A new block, owned by the caller, to be freed with
    /// `Box::from_raw`.
    pub(super) fn alloc() -> *mut Block<T> {
        Box::into_raw(Box::new(Block {
            next: AtomicPtr::new(ptr::null_mut()),
            slots: std::array::from_fn(|_| Slot {
                stamp: AtomicUsize::new(0),
                value: UnsafeCell::new(MaybeUninit::uninit()),
            }),
        }))
    }
}

/// A Treiber stack of spent blocks, linked through `next`, on its own
/// cache line. Pushed by the consumer; popped by one thread at a time
/// (G5): the installer, or the consumer giving spare blocks back
/// ([`trim`](Self::trim)). That is what keeps it free of ABA (the top
/// cannot be popped and pushed back between a pop's read and its CAS) and
/// lets a trim free what it pops: no pop is halfway through a block it
/// frees.
pub(super) struct FreeStack<T>(pub(super) CachePadded<Stack<T>>);

pub(super) struct Stack<T> {
    top: AtomicPtr<Block<T>>,
    /// Held by the one thread popping (G5). The installer does not wait
    /// for it: finding it held (by a trim), it allocates a block instead.
    /// Visible to the queue's unit tests, which hold it by hand.
    pub(super) popping: AtomicBool,
}

impl<T> FreeStack<T> {
    pub(super) fn new() -> Self {
        FreeStack(CachePadded::new(Stack {
            top: AtomicPtr::new(ptr::null_mut()),
            popping: AtomicBool::new(false),
        }))
    }

    /// Pushes `block`.
    ///
    /// # Safety
    ///
    /// `block` came from [`Block::alloc`] and the caller owns it: no other
    /// thread touches it until a `pop` hands it out. The caller is the
    /// queue's consumer (G3): no [`trim`](Self::trim) runs meanwhile.
    pub(super) unsafe fn push(&self, block: *mut Block<T>) {
        let mut top = self.0.top.load(Ordering::Relaxed);
        loop {
            // SAFETY: ours until the CAS publishes it (the contract).
            unsafe { (*block).next.store(top, Ordering::Relaxed) };
            // Release: the link above, and our reads of the block's slots,
            // happen-before the installer that pops it.
            match self
                .0
                .top
                .compare_exchange_weak(top, block, Ordering::Release, Ordering::Relaxed)
            {
                Ok(_) => return,
                Err(actual) => top = actual,
            }
        }
    }

    /// Takes a block off the stack, with `next` reset to null, or `None`
    /// if it is empty or a [`trim`](Self::trim) holds it (the caller
    /// allocates instead of waiting).
    ///
    /// # Safety
    ///
    /// Called by the installer, of which there is one at a time (G5), and
    /// blocks on the stack stay allocated until a trim, which cannot run
    /// while this holds `popping` (G4).
    pub(super) unsafe fn pop(&self) -> Option<*mut Block<T>> {
        // Acquire: a trim's frees, and its cut of the list, happen-before
        // our reads of what it left. A compare-and-swap, not a swap: it
        // writes nothing when the flag is held (and loom models a swap
        // racing a store wrongly: tokio-rs/loom#254, which a swap here
        // ran into, leaving the flag set in a history no CPU allows).
        if self
            .0
            .popping
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            return None;
        }
        let mut top = self.0.top.load(Ordering::Acquire);
        let popped = loop {
            if top.is_null() {
                break None;
            }
            // SAFETY: live (G4: no trim while we hold `popping`), and
            // `top` stays on the stack with this `next` until our CAS,
            // since nobody else pops (G5).
            let next = unsafe { (*top).next.load(Ordering::Relaxed) };
            match self
                .0
                .top
                .compare_exchange_weak(top, next, Ordering::Acquire, Ordering::Acquire)
            {
                Ok(_) => {
                    // SAFETY: popped: ours alone until we publish it.
                    unsafe { (*top).next.store(ptr::null_mut(), Ordering::Relaxed) };
                    break Some(top);
                }
                Err(actual) => top = actual,
            }
        };
        // Release: our reads of the stack's blocks happen-before a trim
        // that frees them.
        self.0.popping.store(false, Ordering::Release);
        popped
    }

    /// Frees every block on the stack after the first `keep`; returns how
    /// many it freed. Frees none if the installer is popping (it returns
    /// at once rather than wait for it).
    ///
    /// # Safety
    ///
    /// The caller is the queue's consumer (G3), so no `push` runs
    /// meanwhile; holding `popping`, it is the one popper (G5). Blocks on
    /// the stack came from [`Block::alloc`] and no producer touches them
    /// (G4), so they are the caller's to free.
    pub(super) unsafe fn trim(&self, keep: usize) -> usize {
        if self
            .0
            .popping
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            return 0;
        }
        let mut link = &self.0.top;
        for _ in 0..keep {
            let b = link.load(Ordering::Relaxed);
            if b.is_null() {
                break;
            }
            // SAFETY: on the stack, so live; ours while we hold `popping`.
            link = unsafe { &(*b).next };
        }
        let mut cut = link.swap(ptr::null_mut(), Ordering::Relaxed);
        let mut freed = 0;
        while !cut.is_null() {
            // SAFETY: cut off the stack above, so no thread can reach it
            // any more (the contract), and not freed yet.
            let next = unsafe { (*cut).next.load(Ordering::Relaxed) };
            // SAFETY: as above, and made by `Block::alloc`
            // (`Box::into_raw`); each block is visited once.
            drop(unsafe { Box::from_raw(cut) });
            cut = next;
            freed += 1;
        }
        // Release: the cut happens-before the next pop.
        self.0.popping.store(false, Ordering::Release);
        freed
    }

    /// The top block, for `Drop` to walk the stack.
    pub(super) fn top(&mut self) -> *mut Block<T> {
        self.0.top.load(Ordering::Relaxed)
    }
}
