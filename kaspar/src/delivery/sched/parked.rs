//! A pooled actor's hold on itself, parked in its mailbox's hook while it
//! waits, so that the push that ends the wait schedules the actor without
//! touching its reference count.
//!
//! A scheduled actor is an `Arc` in a run queue. Taking one for every
//! schedule (a weak reference upgraded: a compare-and-swap) and giving it
//! back when the activation ends (a decrement) cost a pooled hop two of
//! its ten read-modify-writes, about an eighth of a ping-pong's time
//! (152-160 ns a round trip with them, 132-142 without, on the dev VM). The
//! activation's own hold serves instead: it parks it here as it starts,
//! and the one party whose read-modify-write of the mailbox ends the
//! actor's next idle period takes it out and schedules it. The count
//! never moves.
//!
//! Ownership (P1). The slot belongs to whoever the scheduling state
//! machine (module docs of `sched`) makes responsible for the actor:
//! the running activation, from its start until its mailbox goes idle;
//! then the one push (or `close`) that ends that idle period, until it
//! has scheduled the actor; then the activation it scheduled. The hand-
//! overs are the mailbox's release as it goes idle and the ending
//! push's acquire, and the run queue's release and acquire, so each
//! owner's accesses happen before the next one's. An activation that does
//! not go idle (its budget spent, a push half-written, the actor done)
//! owns the slot still and takes its hold back.
//!
//! Lifetime (P2). Once it has parked its hold, the activation reaches its
//! actor through an unowned handle, and once the mailbox went idle the
//! hold may be anywhere, even dropped (a run queue dropped at a pool's
//! end). The actor is alive all the same: a pooled actor is in its pool's
//! member list from its attach until its last activation leaves it
//! (`members`), and that activation cannot begin before this one's tail
//! has left the carried state (`carried`, C2). Nothing after that touches
//! the actor.
//!
//! The loom model `tests/loom_carried.rs` hands the hold through this
//! slot between two workers and a producer; with the activation parking
//! its hold after its drain instead of before, loom reports the slot's
//! concurrent access (checked).

use std::sync::Arc;

use crate::base::sync::UnsafeCell;

/// The slot (module docs).
pub(crate) struct Parked<T>(UnsafeCell<Option<Arc<T>>>);

// SAFETY: the slot moves an `Arc<T>` from one owner to the next (P1),
// never sharing a `&Arc<T>` between threads: what moving an `Arc<T>`
// needs, `T: Send + Sync`.
unsafe impl<T: Send + Sync> Sync for Parked<T> {}

impl<T> Parked<T> {
    /// An empty slot: a new actor's first activation is scheduled by its
    /// attach, with a hold of its own.
    pub(crate) fn new() -> Self {
        Parked(UnsafeCell::new(None))
    }

    /// Parks `hold`.
    ///
    /// # Safety
    ///
    /// The caller owns the slot (P1): it is the activation the state
    /// machine started, before its mailbox goes idle.
    #[inline]
    pub(crate) unsafe fn put(&self, hold: Arc<T>) {
        // SAFETY: the caller's: nobody else reads or writes the slot.
        let old = self.0.with_mut(|p| unsafe { (*p).replace(hold) });
        debug_assert!(old.is_none(), "kaspar: a pooled actor parked twice");
    }

    /// Takes the parked hold out, if one is parked.
    ///
    /// # Safety
    ///
    /// The caller owns the slot (P1): the activation that parked, before
    /// its mailbox went idle, or the one party that ended the idle period
    /// (a push or a `close`), before it schedules.
    #[inline]
    pub(crate) unsafe fn take(&self) -> Option<Arc<T>> {
        // SAFETY: the caller's: nobody else reads or writes the slot.
        self.0.with_mut(|p| unsafe { (*p).take() })
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn a_hold_parked_and_taken_keeps_its_count() {
        let hold = Arc::new(7u32);
        let parked = Parked::new();
        // SAFETY: one thread owns the slot throughout.
        unsafe { parked.put(Arc::clone(&hold)) };
        assert_eq!(Arc::strong_count(&hold), 2);
        // SAFETY: as above.
        let back = unsafe { parked.take() }.expect("parked");
        assert!(Arc::ptr_eq(&back, &hold));
        // SAFETY: as above.
        assert!(unsafe { parked.take() }.is_none(), "taken once");
        drop(back);
        assert_eq!(Arc::strong_count(&hold), 1);
    }

    #[test]
    fn a_slot_dropped_with_a_hold_in_it_gives_the_hold_back() {
        let hold = Arc::new(7u32);
        let parked = Parked::new();
        // SAFETY: one thread owns the slot.
        unsafe { parked.put(Arc::clone(&hold)) };
        drop(parked);
        assert_eq!(Arc::strong_count(&hold), 1);
    }
}
