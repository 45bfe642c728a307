//! The blocks a `SegmentedMpsc` is made of, and the stack its spent blocks
//! wait on for reuse. The invariants named here (G4, G5) are stated in
//! the queue's header (`mod.rs`).

use std::mem::MaybeUninit;
use std::ptr;

use crossbeam_utils::CachePadded;

use crate::base::sync::{AtomicPtr, AtomicUsize, Ordering, UnsafeCell};

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
/// cache line. Pushed by the consumer; popped only by the installer, one
/// at a time (G5), which is what keeps it free of ABA: the top cannot be
/// popped and pushed back between a pop's read and its CAS.
pub(super) struct FreeStack<T>(CachePadded<AtomicPtr<Block<T>>>);

impl<T> FreeStack<T> {
    pub(super) fn new() -> Self {
        FreeStack(CachePadded::new(AtomicPtr::new(ptr::null_mut())))
    }

    /// Pushes `block`.
    ///
    /// # Safety
    ///
    /// `block` came from [`Block::alloc`] and the caller owns it: no other
    /// thread touches it until a `pop` hands it out.
    pub(super) unsafe fn push(&self, block: *mut Block<T>) {
        let mut top = self.0.load(Ordering::Relaxed);
        loop {
            // SAFETY: ours until the CAS publishes it (the contract).
            unsafe { (*block).next.store(top, Ordering::Relaxed) };
            // Release: the link above, and our reads of the block's slots,
            // happen-before the installer that pops it.
            match self
                .0
                .compare_exchange_weak(top, block, Ordering::Release, Ordering::Relaxed)
            {
                Ok(_) => return,
                Err(actual) => top = actual,
            }
        }
    }

    /// Takes a block off the stack, with `next` reset to null, or `None`
    /// if it is empty.
    ///
    /// # Safety
    ///
    /// No other `pop` runs at the same time (G5), and blocks on the stack
    /// stay allocated (G4).
    pub(super) unsafe fn pop(&self) -> Option<*mut Block<T>> {
        let mut top = self.0.load(Ordering::Acquire);
        while !top.is_null() {
            // SAFETY: live (G4), and `top` stays on the stack with this
            // `next` until our CAS, since nobody else pops (G5).
            let next = unsafe { (*top).next.load(Ordering::Relaxed) };
            match self
                .0
                .compare_exchange_weak(top, next, Ordering::Acquire, Ordering::Acquire)
            {
                Ok(_) => {
                    // SAFETY: popped: ours alone until we publish it.
                    unsafe { (*top).next.store(ptr::null_mut(), Ordering::Relaxed) };
                    return Some(top);
                }
                Err(actual) => top = actual,
            }
        }
        None
    }

    /// The top block, for `Drop` to walk the stack.
    pub(super) fn top(&mut self) -> *mut Block<T> {
        self.0.load(Ordering::Relaxed)
    }
}
