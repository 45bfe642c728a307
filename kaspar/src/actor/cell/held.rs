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
    pub(super) lock: &'a Arc<ActorLock>,
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
    pub(crate) unsafe fn adopt(lock: &'a Arc<ActorLock>) -> Self {
        let me = chain::thread_token();
        // SAFETY: this function's contract.
        unsafe { lock.adopt(me) };
        Held::made(lock, me)
    }

    pub(crate) fn acquire(lock: &'a Arc<ActorLock>) -> Self {
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
    fn made(lock: &'a Arc<ActorLock>, me: usize) -> Self {
        Held {
            lock,
            me,
            group: Self::mark(lock),
            _not_send: PhantomData,
        }
    }

    /// For a group's lock, which this thread has just acquired: the mark
    /// that sends calls between members down the intra-group path, set
    /// only while no member has a flag.
    fn mark(lock: &ActorLock) -> Option<GroupMark> {
        lock.is_group()
            .then(|| GroupMark::set(lock, lock.members_clean()))
    }

    /// Lets a parked synchronous caller in between two messages, and takes
    /// the lock back; a no-op unless somebody is parked.
    ///
    /// While the lock is let go, the caller let in may change what the
    /// group mark stands for (it may halt a member), so the mark comes off
    /// before the release and is set afresh, from the members' flags as
    /// they are then, after the lock is back. Waiting to take the lock back
    /// is a wait like any other: it is registered with the deadlock
    /// detector under `target` (without refusing: a run loop cannot back
    /// out), so a caller let in that waits for this run loop (an `ask` to
    /// its own actor, say) finds the cycle instead of hanging.
    #[inline]
    pub(crate) fn bump(&mut self, target: impl FnOnce() -> Target) {
        if !self.others_wait() {
            return;
        }
        self.let_in_and_retake(target);
    }

    /// Whether a thread is parked waiting for this lock: the next
    /// [`bump`](Self::bump) would let it in.
    #[inline(always)]
    pub(crate) fn others_wait(&self) -> bool {
        self.lock.has_parked()
    }

    #[cold]
    #[inline(never)]
    fn let_in_and_retake(&mut self, target: impl FnOnce() -> Target) {
        // The mark never names a lock this thread does not hold.
        drop(self.group.take());
        // SAFETY: `self` was made by `acquire`, `acquire_watched` or
        // `adopt` on this thread and has not been dropped, and every bump
        // returns holding the lock again, so this thread holds it.
        if unsafe { self.lock.let_parked_in() } && !self.lock.try_acquire(self.me) {
            // Nothing between the release above and the acquisition below
            // unwinds (`target` names a cell or a group, and registering
            // takes a mutex that does not poison into room reserved in
            // advance), so `Drop` never releases a lock this thread lost.
            let _registered = deadlock::register_wait(self.me, WaitOn::lock(self.lock), target);
            self.lock.park_acquire(self.me);
        }
        self.group = Self::mark(self.lock);
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
