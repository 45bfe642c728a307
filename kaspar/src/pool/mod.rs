//! A per-thread-cached memory pool for messages: [`Pooled<T>`].
//!
//! # When to use it
//!
//! Most messages need neither a `Box` nor this pool. An actor's mailbox
//! holds its generated message enum by value, so a message that is a few
//! words (ids, numbers, small arrays, an `Arc` to shared data) travels
//! inline in the queue's ring slot: no allocation at all, which no pool can
//! beat. Reach for `Pooled<T>` when a message must carry something large
//! (a 1 KiB buffer, a big struct) and you do not want every ring slot of the
//! enum to be that large, or when a value must outlive the call that made
//! it and be freed on another thread. That last case, allocate here and
//! free there, is where the system allocator suffers: the freeing thread's
//! allocator cache fills with the other thread's memory and spills through
//! a shared path. `Pooled<T>` returns every block to the *freeing* thread's
//! cache instead.
//!
//! ```
//! use kaspar::pool::Pooled;
//!
//! let frame = Pooled::new([0u8; 1024]);
//! let handle = std::thread::spawn(move || frame.iter().map(|&b| b as u32).sum::<u32>());
//! assert_eq!(handle.join().unwrap(), 0); // the block went to that thread's cache
//! ```
//!
//! # How it works
//!
//! Three tiers per size class, after Bonwick and Adams' magazine allocator:
//!
//! 1. **Thread cache** (`magazine.rs`): each thread holds two magazines
//!    (fixed stacks of free blocks) per size class. Allocating pops, freeing
//!    pushes. This path takes no lock and performs no atomic
//!    read-modify-write: it is a thread-local access and a few loads and
//!    stores.
//! 2. **Depot** (`depot.rs`): when both of a thread's magazines are empty
//!    (or both full) it trades a whole magazine with the size class's depot
//!    under one short lock. One lock per magazine's worth of blocks, never
//!    per block. A single global lock per block was measured at half the
//!    system allocator's throughput; the per-thread magazine is what wins.
//! 3. **Slabs** (`slab.rs`): when the depot has no full magazine it carves
//!    fresh blocks from cache-line-aligned slabs taken from the system
//!    allocator.
//!
//! The pool for `T` is chosen at compile time from `size_of::<T>()` and
//! `align_of::<T>()`: blocks come in [`SIZE_CLASSES`] power-of-two sizes
//! from [`MIN_BLOCK`] to [`MAX_BLOCK`] bytes, all aligned to [`BLOCK_ALIGN`]
//! (one cache line, so two messages never share a line). Finding the pool
//! is an array index; there is nothing to declare. Types larger than
//! `MAX_BLOCK` or aligned more strictly than `BLOCK_ALIGN` are not pooled:
//! `Pooled<T>` then allocates from the global allocator, like a `Box`.
//! Zero-sized types allocate nothing.
//!
//! # Costs and guarantees
//!
//! * After warm-up (once the pool holds as many blocks as the program keeps
//!   in flight), `Pooled::new` and dropping a `Pooled` perform no system
//!   allocation, on any thread, including when a block is freed on a
//!   different thread than the one that allocated it.
//! * A small `T` still takes a whole block of its class (at least 64 bytes);
//!   the pool trades memory for speed and isolation.
//! * Each thread may hold up to two magazines per size class it uses (at
//!   most 64 blocks, or about 256 KiB for the largest classes).
//! * When a thread exits, its thread-local cache's destructor hands all its
//!   magazines back to the depots, so blocks cached by exited threads are
//!   reused, not leaked. [`MemoryPool::flush_thread_cache`] does the same on
//!   demand, e.g. before a thread idles for a long time.
//!
//! # Memory at process end
//!
//! The pool never returns slabs to the system: memory it has grown to stays
//! reserved for the process lifetime, as free blocks in depots and thread
//! caches, and is reclaimed by the operating system when the process exits.
//! The pool's footprint is therefore its high-water mark. A `Pooled<T>`
//! still alive at exit is not dropped (as with any value leaked at exit).
//! [`MemoryPool::stats`] reports what each size class holds.

mod depot;
mod magazine;
mod slab;
#[cfg(test)]
mod tests;

use std::alloc::{self, Layout};
use std::borrow::{Borrow, BorrowMut};
use std::cell::RefCell;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::marker::PhantomData;
use std::mem::{self, ManuallyDrop};
use std::ops::{Deref, DerefMut};
use std::ptr::{self, NonNull};
// A one-time lazy initializer, not part of the algorithm: the depots inside
// use `crate::base::sync`, and the loom model builds its own depots.
use std::sync::OnceLock;

use depot::Depot;
use magazine::ClassCache;

/// The loom model's view of the depot tier. Not part of the public API.
///
/// Under `--cfg loom` the depot's lock is loom's, which exists only inside
/// a `loom::model`; models therefore build their own depots, and
/// `Pooled<T>` (whose global depots outlive any model) is not for use in
/// them.
#[cfg(loom)]
#[doc(hidden)]
pub mod __loom {
    pub use super::depot::{Depot, DepotCounts};
    pub use super::magazine::{ClassCache, Magazine};
}

/// Alignment of every pooled block: one cache line.
pub const BLOCK_ALIGN: usize = slab::SLAB_ALIGN;
/// The smallest block size.
pub const MIN_BLOCK: usize = 64;
/// The number of size classes: `MIN_BLOCK << 0` to `MIN_BLOCK << (SIZE_CLASSES - 1)`.
pub const SIZE_CLASSES: usize = 11;
/// The largest block size (64 KiB); larger types use the global allocator.
pub const MAX_BLOCK: usize = MIN_BLOCK << (SIZE_CLASSES - 1);

/// Where the memory for a type comes from, decided at compile time.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Route {
    /// Zero-sized: nothing to allocate.
    Nothing,
    /// The pool of this size class.
    Class(usize),
    /// Too big or too aligned to pool: the global allocator.
    Global,
}

const fn route(size: usize, align: usize) -> Route {
    if size == 0 {
        return Route::Nothing;
    }
    if size > MAX_BLOCK || align > BLOCK_ALIGN {
        return Route::Global;
    }
    let mut class = 0;
    while (MIN_BLOCK << class) < size {
        class += 1;
    }
    Route::Class(class)
}

/// Blocks per magazine for a block size: 32, fewer for big blocks so that a
/// magazine stays around 128 KiB at most (but at least 4 blocks).
const fn magazine_capacity(block_size: usize) -> usize {
    let by_bytes = (128 * 1024) / block_size;
    let cap = if by_bytes < magazine::MAGAZINE_SLOTS {
        by_bytes
    } else {
        magazine::MAGAZINE_SLOTS
    };
    if cap < 4 {
        4
    } else {
        cap
    }
}

/// Blocks per slab: 64 KiB worth, and at least one magazine's worth.
const fn blocks_per_slab(block_size: usize) -> usize {
    let by_bytes = (64 * 1024) / block_size;
    let cap = magazine_capacity(block_size);
    if by_bytes < cap {
        cap
    } else {
        by_bytes
    }
}

/// The shared pool of one size class: its depot and slabs.
///
/// There is one per size class, for the whole process; [`Pooled<T>`] finds
/// its own. This handle is for inspecting them.
pub struct MemoryPool {
    depot: Depot,
}

static POOLS: OnceLock<[MemoryPool; SIZE_CLASSES]> = OnceLock::new();

#[inline]
fn pools() -> &'static [MemoryPool; SIZE_CLASSES] {
    POOLS.get_or_init(|| {
        std::array::from_fn(|class| {
            let size = MIN_BLOCK << class;
            MemoryPool {
                depot: Depot::new(size, magazine_capacity(size), blocks_per_slab(size)),
            }
        })
    })
}

impl MemoryPool {
    /// The pool `Pooled<T>` draws from, or `None` if `T` is zero-sized or
    /// is not pooled (larger than [`MAX_BLOCK`] or aligned more than
    /// [`BLOCK_ALIGN`]).
    pub fn of<T>() -> Option<&'static MemoryPool> {
        match Pooled::<T>::ROUTE {
            Route::Class(class) => Some(&pools()[class]),
            Route::Nothing | Route::Global => None,
        }
    }

    /// Every size class's pool, smallest blocks first.
    pub fn all() -> &'static [MemoryPool] {
        pools()
    }

    /// Bytes per block in this pool.
    pub fn block_size(&self) -> usize {
        self.depot.block_size()
    }

    /// A snapshot of what this pool holds. Blocks in thread caches are
    /// counted in `carved_blocks` but not in `depot_blocks`.
    pub fn stats(&self) -> PoolStats {
        let c = self.depot.counts();
        PoolStats {
            block_size: self.depot.block_size(),
            slabs: c.slabs,
            reserved_bytes: c.slab_bytes,
            carved_blocks: c.carved,
            depot_blocks: c.free_blocks,
        }
    }

    /// Hands the calling thread's cached blocks, of every size class, back
    /// to the shared depots. Thread exit does this automatically; call it
    /// to let other threads reuse the memory sooner. Costs one depot lock
    /// per magazine held.
    pub fn flush_thread_cache() {
        let _ = CACHE.try_with(|cache| {
            if let Ok(mut cache) = cache.try_borrow_mut() {
                cache.drain();
            }
        });
    }
}

impl fmt::Debug for MemoryPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemoryPool")
            .field("block_size", &self.block_size())
            .finish_non_exhaustive()
    }
}

/// A snapshot of one size class's pool, from [`MemoryPool::stats`].
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[non_exhaustive]
pub struct PoolStats {
    /// Bytes per block.
    pub block_size: usize,
    /// Slabs taken from the system allocator (never given back).
    pub slabs: usize,
    /// Bytes those slabs hold.
    pub reserved_bytes: usize,
    /// Blocks ever carved from the slabs: the pool's size in blocks.
    pub carved_blocks: usize,
    /// Free blocks waiting in the shared depot (not in a thread cache, not
    /// in a live `Pooled`).
    pub depot_blocks: usize,
}

/// One thread's caches, one per size class.
struct ThreadCache {
    classes: [ClassCache; SIZE_CLASSES],
}

impl ThreadCache {
    const fn new() -> Self {
        const EMPTY: ClassCache = ClassCache::new();
        ThreadCache {
            classes: [EMPTY; SIZE_CLASSES],
        }
    }

    fn drain(&mut self) {
        // Nothing can be cached before the pools exist.
        if let Some(pools) = POOLS.get() {
            for (cache, pool) in self.classes.iter_mut().zip(pools) {
                cache.drain_into(&pool.depot);
            }
        }
    }
}

impl Drop for ThreadCache {
    /// Thread exit: every cached block goes back to its depot.
    fn drop(&mut self) {
        self.drain();
    }
}

thread_local! {
    static CACHE: RefCell<ThreadCache> = const { RefCell::new(ThreadCache::new()) };
}

/// A free block of `class`: from this thread's cache, or straight from the
/// depot if the cache is gone (thread teardown) or busy.
#[inline]
fn alloc_block(class: usize) -> NonNull<u8> {
    let cached = CACHE.try_with(|cache| {
        let mut cache = cache.try_borrow_mut().ok()?;
        let cache = &mut cache.classes[class];
        Some(match cache.pop_fast() {
            Some(block) => block,
            None => cache.alloc_slow(&pools()[class].depot),
        })
    });
    match cached {
        Ok(Some(block)) => block,
        _ => pools()[class].depot.alloc_one(),
    }
}

/// Returns a block of `class` to this thread's cache (or the depot).
#[inline]
fn free_block(class: usize, block: NonNull<u8>) {
    let cached = CACHE.try_with(|cache| {
        let Ok(mut cache) = cache.try_borrow_mut() else {
            return false;
        };
        let cache = &mut cache.classes[class];
        if let Err(block) = cache.push_fast(block) {
            cache.free_slow(&pools()[class].depot, block);
        }
        true
    });
    if cached != Ok(true) {
        pools()[class].depot.free_one(block);
    }
}

/// An owned `T` in a pooled, cache-line-aligned block: a `Box` whose
/// memory comes from a per-thread cache.
///
/// Dropping it (or [`into_inner`](Pooled::into_inner)) drops the value and
/// returns the block to the cache of the thread doing the drop, which may
/// differ from the allocating thread. `Send` when `T: Send`, `Sync` when
/// `T: Sync`. See the [module docs](self) for when a plain inline message is
/// the better choice.
///
/// Like `Box`, its own operations are associated functions
/// (`Pooled::into_inner(p)`), so they never shadow methods of `T`.
pub struct Pooled<T> {
    ptr: NonNull<T>,
    /// Owns a `T` (for the drop check and variance, like `Box<T>`).
    _owns: PhantomData<T>,
}

// SAFETY: a `Pooled<T>` owns its `T` exclusively, like `Box<T>`, so sending
// it sends the `T`. The block has no thread affinity: any thread may free it
// into its own cache.
unsafe impl<T: Send> Send for Pooled<T> {}
// SAFETY: `&Pooled<T>` only hands out `&T`.
unsafe impl<T: Sync> Sync for Pooled<T> {}

impl<T> Pooled<T> {
    const ROUTE: Route = route(mem::size_of::<T>(), mem::align_of::<T>());

    /// Moves `value` into a block from the calling thread's cache.
    ///
    /// In steady state this takes no lock, performs no atomic
    /// read-modify-write and no system allocation; when the thread's cache
    /// runs dry it trades one magazine with the shared depot.
    #[inline]
    pub fn new(value: T) -> Self {
        let ptr = Self::alloc();
        // SAFETY: `alloc` returns memory valid for writes of one `T`,
        // aligned for `T`, that nothing else references (a fresh block, a
        // global allocation with `T`'s layout, or dangling for a ZST).
        unsafe { ptr.as_ptr().write(value) };
        Pooled {
            ptr,
            _owns: PhantomData,
        }
    }

    /// Moves the value out and returns the block to the calling thread's
    /// cache.
    #[inline]
    pub fn into_inner(this: Self) -> T {
        let this = ManuallyDrop::new(this);
        // SAFETY: `this.ptr` holds an initialized `T` owned by `this`, which
        // is never dropped (ManuallyDrop), so the value is moved out once.
        let value = unsafe { this.ptr.as_ptr().read() };
        // SAFETY: the block came from `Self::alloc` and its value was just
        // moved out; nothing references it any more.
        unsafe { Self::release(this.ptr) };
        value
    }

    #[inline]
    fn alloc() -> NonNull<T> {
        match Self::ROUTE {
            Route::Nothing => NonNull::dangling(),
            Route::Class(class) => alloc_block(class).cast(),
            Route::Global => {
                let layout = Layout::new::<T>();
                // SAFETY: `T` is not zero-sized on this route.
                let raw = unsafe { alloc::alloc(layout) };
                match NonNull::new(raw) {
                    Some(p) => p.cast(),
                    None => alloc::handle_alloc_error(layout),
                }
            }
        }
    }

    /// Returns a block to where it came from.
    ///
    /// # Safety
    ///
    /// `ptr` came from `Self::alloc`, holds no live value, and is not used
    /// again.
    #[inline]
    unsafe fn release(ptr: NonNull<T>) {
        match Self::ROUTE {
            Route::Nothing => {}
            Route::Class(class) => free_block(class, ptr.cast()),
            // SAFETY: on this route `ptr` was allocated by the global
            // allocator with `Layout::new::<T>()` (caller's contract).
            Route::Global => unsafe { alloc::dealloc(ptr.as_ptr().cast(), Layout::new::<T>()) },
        }
    }
}

impl<T> Drop for Pooled<T> {
    fn drop(&mut self) {
        /// Releases the block even if `T`'s destructor panics.
        struct Release<T>(NonNull<T>);
        impl<T> Drop for Release<T> {
            fn drop(&mut self) {
                // SAFETY: runs after the value was dropped (or its drop
                // unwound), once, for a block from `Pooled::alloc`.
                unsafe { Pooled::<T>::release(self.0) };
            }
        }
        let _release = Release(self.ptr);
        // SAFETY: `self.ptr` holds an initialized `T` that this `Pooled`
        // owns; it is dropped once, here, and never read again.
        unsafe { ptr::drop_in_place(self.ptr.as_ptr()) };
    }
}

impl<T> Deref for Pooled<T> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        // SAFETY: `ptr` holds an initialized `T` for the life of `self`, and
        // `&self` rules out a `&mut` to it.
        unsafe { self.ptr.as_ref() }
    }
}

impl<T> DerefMut for Pooled<T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as for `deref`; `&mut self` makes this the only reference.
        unsafe { self.ptr.as_mut() }
    }
}

impl<T> From<T> for Pooled<T> {
    fn from(value: T) -> Self {
        Pooled::new(value)
    }
}

impl<T: Default> Default for Pooled<T> {
    fn default() -> Self {
        Pooled::new(T::default())
    }
}

impl<T: Clone> Clone for Pooled<T> {
    fn clone(&self) -> Self {
        Pooled::new((**self).clone())
    }
}

impl<T: fmt::Debug> fmt::Debug for Pooled<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl<T: fmt::Display> fmt::Display for Pooled<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&**self, f)
    }
}

impl<T: PartialEq> PartialEq for Pooled<T> {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl<T: Eq> Eq for Pooled<T> {}

impl<T: Hash> Hash for Pooled<T> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        (**self).hash(state);
    }
}

impl<T> AsRef<T> for Pooled<T> {
    fn as_ref(&self) -> &T {
        self
    }
}

impl<T> AsMut<T> for Pooled<T> {
    fn as_mut(&mut self) -> &mut T {
        self
    }
}

impl<T> Borrow<T> for Pooled<T> {
    fn borrow(&self) -> &T {
        self
    }
}

impl<T> BorrowMut<T> for Pooled<T> {
    fn borrow_mut(&mut self) -> &mut T {
        self
    }
}
