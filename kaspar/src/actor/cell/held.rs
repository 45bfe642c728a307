//! [`Held`]: a run loop's hold on an actor's (or a group's) lock.

use std::marker::PhantomData;
use std::sync::Arc;

use crate::base::ids::Target;
use crate::guard::chain::{self, GroupMark};
use crate::guard::deadlock::{self, WaitOn};
use crate::guard::lock::ActorLock;

/// A run loop's hold on an actor's (or a group's) lock for one batch of
/// queued messages. The run loop's thread holds no other lock, so it cannot
/// close a wait cycle and waits plainly.
pub(crate) struct Held<'a> {
    pub(super) lock: &'a ActorLock,
    pub(super) me: usize,
    /// For a group's lock: marks this thread as its holder, so that calls
    /// between members take the intra-group path. Taken off before the
    /// lock is released.
    group: Option<GroupMark>,
    /// A hold is released by the thread that took it.
    _not_send: PhantomData<*const ()>,
}

impl<'a> Held<'a> {
    /// Takes over `lock`, which the spawner acquired for this thread (see
    /// [`ActorLock::hand_over`]).
    ///
    /// # Safety
    ///
    /// `lock` was handed over for the calling thread, and nothing else
    /// adopts it.
    pub(crate) unsafe fn adopt(lock: &'a ActorLock) -> Self {
        let me = chain::thread_token();
        // SAFETY: this function's contract.
        unsafe { lock.adopt(me) };
        Held::made(lock, me)
    }

    pub(crate) fn acquire(lock: &'a ActorLock) -> Self {
        let me = chain::thread_token();
        debug_assert!(
            chain::snapshot().is_empty(),
            "run loop entered with a chain"
        );
        lock.park_acquire(me);
        Held::made(lock, me)
    }

    /// [`acquire`](Self::acquire) for a run loop that may find the lock held
    /// by a synchronous caller: if it must wait, the wait is registered with
    /// the deadlock detector (the caller might be waiting for this very run
    /// loop, on an `ask`), without refusing: a run loop cannot back out, so
    /// the waiter that can finds the cycle.
    pub(crate) fn acquire_watched(
        lock: &'a Arc<ActorLock>,
        target: impl FnOnce() -> Target,
    ) -> Self {
        let me = chain::thread_token();
        if !lock.try_acquire(me) {
            let _registered = deadlock::register_wait(me, WaitOn::lock(lock), target);
            lock.park_acquire(me);
        }
        Held::made(lock, me)
    }

    /// The hold of `lock`, which the calling thread (token `me`) now holds.
    fn made(lock: &'a ActorLock, me: usize) -> Self {
        Held {
            lock,
            me,
            group: lock
                .is_group()
                .then(|| GroupMark::set(lock, lock.members_clean())),
            _not_send: PhantomData,
        }
    }

    /// Lets a parked synchronous caller in between two messages.
    #[inline]
    pub(crate) fn bump(&self) {
        // SAFETY: `self` was made by `acquire`, `acquire_watched` or
        // `adopt` on this thread and has not been dropped, so this thread
        // holds the lock.
        unsafe { self.lock.bump(self.me) };
    }
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        // The group mark goes first: it never names a lock this thread
        // does not hold.
        drop(self.group.take());
        // SAFETY: a `Held` is made only by `acquire`, `acquire_watched` or
        // `adopt`, each of which leaves this thread (token `me`) holding the
        // lock (`Held` is not `Send`, so it is dropped here too). `bump`
        // returns with the lock held again, so it is still held here, and
        // this drop releases the acquisition exactly once.
        unsafe { self.lock.release(self.me) };
    }
}
