//! The exclusive-access lock every actor's handlers run under.
//!
//! A parking_lot raw mutex plus an `owner` word naming the holding thread.
//! The owner word serves two readers, both off the uncontended path:
//!
//! * nested entry: a thread that already holds the lock (a group thread
//!   holds its group's lock for a whole batch; a reentrant actor is held by
//!   the thread re-entering it) proceeds without another atomic RMW;
//! * the cross-thread deadlock detector ([`crate::guard::deadlock`]) follows
//!   "lock → owner → what the owner waits for" edges.
//!
//! Writing the owner costs two relaxed stores to a cache line the lock's own
//! CAS has just made exclusive to this core.
//!
//! # Contract
//!
//! Acquiring is safe. Releasing and bumping are `unsafe fn`s: each needs
//! the calling thread to hold the lock, which only the guards that acquired
//! it can promise (`actor::cell::Entered` for a synchronous entry,
//! `actor::cell::Held` for a run loop's batch). The owner word is written
//! only by the holder: after each acquire, and cleared before each release
//! or hand-over. The loom model `tests/loom_lock.rs` checks this protocol.

use std::fmt;

use crossbeam_utils::Backoff;

use crate::base::sync::{hint, AtomicUsize, Ordering, RawLock};
use crate::guard::chain;

/// How long a synchronous delivery is prepared to wait for a held lock.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Wait {
    /// `fast_send_x`, `fast_send_void`: never wait.
    Try,
    /// `fast_send_spin`: busy-wait with a spin hint.
    Spin,
    /// `fast_send_adaptive`: spin a bounded count, then park.
    Adaptive,
    /// `fast_send`: park.
    Park,
}

/// The owner word of a lock acquired for a thread that has yet to adopt it
/// (never a thread token: tokens are addresses of thread-local data).
const HANDED_OVER: usize = usize::MAX;

pub(crate) struct ActorLock {
    raw: RawLock,
    /// Token of the thread holding `raw` (see `chain::thread_token`), or 0.
    /// Written only by the holder, right after acquiring and right before
    /// releasing; `Relaxed` suffices because a reader compares it with its
    /// own token (a thread always sees its own writes), and the deadlock
    /// walker reads it under the registry mutex, which orders it after the
    /// owner's registration.
    owner: AtomicUsize,
    /// Token of the thread that runs this lock's run loop (the actor's own
    /// thread, or its group's), or 0 while none does. The thread a queued
    /// message waits for: the deadlock detector follows it from an `ask`
    /// being waited on, or a send waiting for room. Written by that thread
    /// at the start and end of its loop; read under the registry mutex.
    consumer: AtomicUsize,
    /// Whether this lock is shared by the members of a group. Nested entry
    /// into *another* member is then legitimate; on a per-actor lock it can
    /// only mean re-entry into the same actor.
    group: bool,
}

/// Marks the calling thread as the consumer of a lock's queue while it
/// lives (see `ActorLock::consuming`).
pub(crate) struct Consuming<'a> {
    lock: &'a ActorLock,
}

impl Drop for Consuming<'_> {
    fn drop(&mut self) {
        self.lock.consumer.store(0, Ordering::Relaxed);
        chain::set_consuming(false);
    }
}

impl fmt::Debug for ActorLock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ActorLock")
            .field("owner", &self.owner.load(Ordering::Relaxed))
            .field("consumer", &self.consumer.load(Ordering::Relaxed))
            .field("group", &self.group)
            .finish()
    }
}

impl ActorLock {
    pub(crate) fn new(group: bool) -> Self {
        ActorLock {
            raw: RawLock::new(),
            owner: AtomicUsize::new(0),
            consumer: AtomicUsize::new(0),
            group,
        }
    }

    pub(crate) fn is_group(&self) -> bool {
        self.group
    }

    #[inline]
    pub(crate) fn owner(&self) -> usize {
        self.owner.load(Ordering::Relaxed)
    }

    /// The thread running this lock's run loop, or 0.
    #[inline]
    pub(crate) fn consumer(&self) -> usize {
        self.consumer.load(Ordering::Relaxed)
    }

    /// Records the calling thread (token `me`) as the one that handles this
    /// lock's queued messages, until the returned guard is dropped.
    pub(crate) fn consuming(&self, me: usize) -> Consuming<'_> {
        self.consumer.store(me, Ordering::Relaxed);
        chain::set_consuming(true);
        Consuming { lock: self }
    }

    /// Whether the calling thread (token `me`) holds the lock.
    #[inline]
    pub(crate) fn held_by(&self, me: usize) -> bool {
        self.owner() == me
    }

    /// One non-blocking attempt.
    #[inline]
    pub(crate) fn try_acquire(&self, me: usize) -> bool {
        if self.raw.try_lock() {
            self.owner.store(me, Ordering::Relaxed);
            true
        } else {
            false
        }
    }

    /// Acquires a fresh lock on behalf of a thread that has yet to start
    /// (an actor's or a group's run loop), which takes it over with
    /// [`adopt`](Self::adopt) before anything else. Until then the owner
    /// word names no thread, so a synchronous caller waits for the lock like
    /// for any holder (and the deadlock detector sees no thread to follow).
    /// This is how `start` guarantees that the `#[started]` hook runs before
    /// the first `fast_send`.
    ///
    /// # Panics
    ///
    /// If the lock is held: only a lock nobody can reach yet is handed over.
    pub(crate) fn hand_over(&self) {
        assert!(
            self.raw.try_lock(),
            "kaspar: handed over a lock that is already held"
        );
        self.owner.store(HANDED_OVER, Ordering::Relaxed);
    }

    /// Takes over a lock acquired by [`hand_over`](Self::hand_over): the
    /// calling thread (token `me`) holds it from now on.
    ///
    /// # Safety
    ///
    /// The lock was handed over for the calling thread, and no other thread
    /// adopts it: the caller then holds it as if it had acquired it, and
    /// must release it exactly once.
    pub(crate) unsafe fn adopt(&self, me: usize) {
        debug_assert_eq!(self.owner(), HANDED_OVER, "adopting a lock not handed over");
        self.owner.store(me, Ordering::Relaxed);
    }

    /// Busy-waits until acquired.
    pub(crate) fn spin_acquire(&self, me: usize) {
        while !self.raw.try_lock() {
            hint::spin_loop();
        }
        self.owner.store(me, Ordering::Relaxed);
    }

    /// Spins with exponential backoff for a bounded count, then parks.
    pub(crate) fn adaptive_acquire(&self, me: usize) {
        let backoff = Backoff::new();
        while !backoff.is_completed() {
            if self.raw.try_lock() {
                self.owner.store(me, Ordering::Relaxed);
                return;
            }
            backoff.snooze();
        }
        self.park_acquire(me);
    }

    /// Parks until acquired.
    pub(crate) fn park_acquire(&self, me: usize) {
        self.raw.lock();
        self.owner.store(me, Ordering::Relaxed);
    }

    /// Releases the lock.
    ///
    /// # Safety
    ///
    /// The calling thread acquired the lock (`try_acquire` returned `true`,
    /// or one of the waiting acquires returned) and has not released it
    /// since. Each acquisition is released exactly once.
    #[inline]
    pub(crate) unsafe fn release(&self) {
        self.owner.store(0, Ordering::Relaxed);
        // SAFETY: the caller holds the lock (this function's contract).
        unsafe { self.raw.unlock() };
    }

    /// Lets a parked waiter (a blocked `fast_send`) in, then takes the lock
    /// back. A no-op unless somebody is parked. Called by run loops between
    /// the messages of a batch, so a batch does not starve synchronous
    /// callers.
    ///
    /// # Safety
    ///
    /// The calling thread (token `me`) holds the lock. It holds it again
    /// when `bump` returns.
    #[inline]
    pub(crate) unsafe fn bump(&self, me: usize) {
        self.owner.store(0, Ordering::Relaxed);
        // SAFETY: the caller holds the lock (this function's contract);
        // `bump` hands it to a parked waiter, if any, and returns with it
        // held again.
        unsafe { self.raw.bump() };
        self.owner.store(me, Ordering::Relaxed);
    }
}
