//! Magazines: the top tier, a thread's private stack of free blocks.
//!
//! Algorithm: Bonwick and Adams' magazine layer ("Magazines and Vmem",
//! USENIX 2001). A magazine is a fixed-capacity stack of free blocks. Each
//! thread keeps two per size class, `loaded` and `previous`:
//!
//! * allocate pops from `loaded`; if it is empty and `previous` is not, the
//!   two swap; only if both are empty does the thread go to the depot,
//!   handing over its empty magazine for a full one;
//! * free pushes onto `loaded`; if it is full and `previous` is not, they
//!   swap; only if both are full does the thread go to the depot, handing
//!   over a full magazine for an empty one.
//!
//! Invariant: `previous` is always either empty or full (or absent), so
//! after any depot exchange the thread can absorb at least a whole
//! magazine's worth of allocations or frees before the next one: a thread
//! that alternates allocate/free at a boundary does not thrash the depot.
//!
//! The cache is plain data owned by one thread: no lock, no atomic. Blocks
//! freed by any thread go into the freeing thread's cache, which is what
//! makes cross-thread free cheap.

use std::mem;
use std::ptr::NonNull;

use super::depot::Depot;

/// Most blocks a magazine can hold; a size class may use fewer.
pub const MAGAZINE_SLOTS: usize = 32;

/// A fixed-capacity stack of free blocks of one size class.
#[derive(Debug)]
pub struct Magazine {
    len: usize,
    capacity: usize,
    slots: [Option<NonNull<u8>>; MAGAZINE_SLOTS],
    /// Link for the depot's intrusive lists.
    pub(super) next: Option<Box<Magazine>>,
}

// SAFETY: a magazine holds addresses of free blocks that nothing else
// references; whoever owns the magazine owns those blocks, so handing the
// magazine to another thread hands over exclusive ownership.
unsafe impl Send for Magazine {}

impl Magazine {
    /// An empty magazine that holds up to `capacity` blocks
    /// (`1..=MAGAZINE_SLOTS`).
    pub fn new(capacity: usize) -> Box<Self> {
        assert!((1..=MAGAZINE_SLOTS).contains(&capacity));
        Box::new(Magazine {
            len: 0,
            capacity,
            slots: [None; MAGAZINE_SLOTS],
            next: None,
        })
    }

    /// Blocks held.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no block is held.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether no more blocks fit.
    #[inline]
    pub fn is_full(&self) -> bool {
        self.len == self.capacity
    }

    /// The blocks held, most recently pushed last.
    #[cfg(any(test, loom))]
    pub fn blocks(&self) -> impl Iterator<Item = NonNull<u8>> + '_ {
        self.slots[..self.len].iter().flatten().copied()
    }

    /// Takes the most recently pushed block.
    #[inline]
    pub fn pop(&mut self) -> Option<NonNull<u8>> {
        if self.len == 0 {
            return None;
        }
        self.len -= 1;
        self.slots[self.len].take()
    }

    /// Adds a block; hands it back if the magazine is full.
    #[inline]
    pub fn push(&mut self, block: NonNull<u8>) -> Result<(), NonNull<u8>> {
        if self.len == self.capacity {
            return Err(block);
        }
        self.slots[self.len] = Some(block);
        self.len += 1;
        Ok(())
    }
}

/// An intrusive singly linked stack of magazines (the depot's lists).
#[derive(Debug, Default)]
pub(super) struct MagazineList {
    head: Option<Box<Magazine>>,
    len: usize,
}

impl MagazineList {
    pub(super) const fn new() -> Self {
        MagazineList { head: None, len: 0 }
    }

    pub(super) fn len(&self) -> usize {
        self.len
    }

    pub(super) fn push(&mut self, mut mag: Box<Magazine>) {
        mag.next = self.head.take();
        self.head = Some(mag);
        self.len += 1;
    }

    pub(super) fn pop(&mut self) -> Option<Box<Magazine>> {
        let mut mag = self.head.take()?;
        self.head = mag.next.take();
        self.len -= 1;
        Some(mag)
    }

    pub(super) fn head_mut(&mut self) -> Option<&mut Magazine> {
        self.head.as_deref_mut()
    }

    #[cfg(any(test, loom))]
    pub(super) fn iter(&self) -> impl Iterator<Item = &Magazine> {
        std::iter::successors(self.head.as_deref(), |m| m.next.as_deref())
    }
}

impl Drop for MagazineList {
    fn drop(&mut self) {
        // Unlink one at a time: the default recursive drop of a long chain
        // of boxes could overflow the stack.
        while self.pop().is_some() {}
    }
}

/// One thread's two magazines for one size class.
#[derive(Debug, Default)]
pub struct ClassCache {
    loaded: Option<Box<Magazine>>,
    previous: Option<Box<Magazine>>,
}

impl ClassCache {
    /// A cache holding nothing; magazines arrive on first use.
    pub const fn new() -> Self {
        ClassCache {
            loaded: None,
            previous: None,
        }
    }

    /// The fast path: a block from `loaded`, if it has one.
    #[inline]
    pub fn pop_fast(&mut self) -> Option<NonNull<u8>> {
        self.loaded.as_mut()?.pop()
    }

    /// The fast path: puts `block` into `loaded` if it has room.
    #[inline]
    pub fn push_fast(&mut self, block: NonNull<u8>) -> Result<(), NonNull<u8>> {
        match self.loaded.as_mut() {
            Some(mag) => mag.push(block),
            None => Err(block),
        }
    }

    /// A free block: from this cache if it has one, else via one exchange
    /// with `depot`.
    #[cfg(any(test, loom))]
    #[inline]
    pub fn alloc(&mut self, depot: &Depot) -> NonNull<u8> {
        match self.pop_fast() {
            Some(block) => block,
            None => self.alloc_slow(depot),
        }
    }

    /// Frees `block` into this cache, exchanging with `depot` if full.
    #[cfg(any(test, loom))]
    #[inline]
    pub fn free(&mut self, depot: &Depot, block: NonNull<u8>) {
        if let Err(block) = self.push_fast(block) {
            self.free_slow(depot, block);
        }
    }

    /// `loaded` is empty (or absent).
    #[cold]
    pub fn alloc_slow(&mut self, depot: &Depot) -> NonNull<u8> {
        if self.previous.as_ref().is_some_and(|m| !m.is_empty()) {
            mem::swap(&mut self.loaded, &mut self.previous);
        } else {
            // Both empty: keep one empty magazine for frees to come, trade
            // the other for a full one.
            let spare = mem::replace(&mut self.previous, self.loaded.take());
            self.loaded = Some(depot.refill(spare));
        }
        self.pop_fast()
            .expect("a swapped-in or refilled magazine holds a block")
    }

    /// `loaded` is full (or absent).
    #[cold]
    pub fn free_slow(&mut self, depot: &Depot, block: NonNull<u8>) {
        if self.previous.as_ref().is_some_and(|m| !m.is_full()) {
            mem::swap(&mut self.loaded, &mut self.previous);
        } else {
            // Both full: keep one full magazine for allocations to come,
            // trade the other for an empty one.
            let full = mem::replace(&mut self.previous, self.loaded.take());
            self.loaded = Some(depot.flush(full));
        }
        if self.push_fast(block).is_err() {
            unreachable!("a swapped-in or fresh magazine has room");
        }
    }

    /// Blocks held by this cache.
    #[cfg(any(test, loom))]
    pub fn cached(&self) -> usize {
        self.loaded.as_ref().map_or(0, |m| m.len()) + self.previous.as_ref().map_or(0, |m| m.len())
    }

    /// Hands both magazines, and so every cached block, back to `depot`.
    pub fn drain_into(&mut self, depot: &Depot) {
        for mag in [self.loaded.take(), self.previous.take()]
            .into_iter()
            .flatten()
        {
            depot.give_back(mag);
        }
    }
}
