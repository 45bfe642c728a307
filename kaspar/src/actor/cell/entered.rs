//! What an entry may do with the actor it holds: reach the state, count,
//! set and clear flags, replace the state in a restart.

use super::{ActorCell, Entered, Refusal, HALTED, RESTART_PENDING, STOPPED, VACANT};
use crate::actor::restart;
use crate::actor::traits::{AccessMode, AccessRef, Actor};
use crate::base::ids::ClassId;
use crate::base::sync::Ordering;
use crate::guard::chain;

impl<'a, A: Actor> Entered<'a, A> {
    /// The handler's view of the state.
    #[inline(always)]
    pub(crate) fn access(&mut self) -> AccessRef<'_, A> {
        // SAFETY: `self` proves this thread holds the lock (no other thread
        // can reach the state) and that the actor's frame is on the chain.
        // Entry refused any `Exclusive` actor already on the chain, so no
        // other `&mut A` is live on this thread; a `Shared` actor may be
        // entered again, but all its references are `&A`. The returned
        // reference borrows `self`, so it cannot outlive the entry.
        //
        // The slot is `Some`: this entry was admitted, and admission refuses
        // a `VACANT` cell, whose flag is cleared only once the slot is
        // filled and set before it is emptied, both under the lock this
        // entry holds.
        unsafe {
            let slot = &mut *self.cell.state.0.get();
            debug_assert!(slot.is_some(), "an admitted entry found no state");
            <A::Access as AccessMode>::from_ptr(slot.as_mut().unwrap_unchecked())
        }
    }

    /// Off the fast path (some flag other than [`TIMED`](super::TIMED) is set): whether
    /// the entry may run its handler. Performs a restart left pending by a
    /// nested panic.
    #[cold]
    #[inline(never)]
    pub(super) fn admit(&mut self, flags: u8) -> Result<(), Refusal> {
        if flags & (STOPPED | HALTED) != 0 {
            return Err(Refusal::Closed);
        }
        if flags & VACANT != 0 {
            return Err(Refusal::NotStarted);
        }
        if flags & RESTART_PENDING != 0 {
            restart::restart_pending(self);
        }
        if self.flags() & HALTED != 0 {
            return Err(Refusal::Closed);
        }
        Ok(())
    }

    /// Counts a handler entry (not a lifecycle hook) in `handled`. Counted
    /// as the handler starts, in every mode: a reply cannot reach its
    /// caller before the count includes its message, and the handler sees
    /// itself counted whichever way it was reached. `class` is a constant
    /// at every call site, so the test folds away.
    #[inline(always)]
    pub(super) fn count(&self, class: ClassId) {
        if class != ClassId::LIFECYCLE {
            self.cell.locked.handled();
        }
        #[cfg(feature = "console")]
        self.current.admitted(&self.cell.edges);
    }

    /// The cell this entry holds.
    pub(crate) fn cell(&self) -> &'a ActorCell<A> {
        self.cell
    }

    /// The flag bits (exact: this entry holds the lock).
    pub(crate) fn flags(&self) -> u8 {
        self.cell.flags.load(Ordering::Relaxed)
    }

    /// Sets flag bits; only a lock holder writes them.
    pub(crate) fn set_flag(&self, bits: u8) {
        self.cell.raise(bits);
    }

    /// Clears flag bits; only a lock holder writes them.
    pub(crate) fn clear_flag(&self, bits: u8) {
        self.cell.lower(bits);
    }

    /// Whether [`replace_state`](Self::replace_state) would succeed: this
    /// entry is the only entry of the actor on this thread. Always so for
    /// an `Exclusive` actor, which is never entered twice (the chain check,
    /// or a group member's `entered` mark); for a `Shared` one, this
    /// entry's frame is the only frame of the actor on the chain.
    #[cold]
    pub(crate) fn may_replace_state(&self) -> bool {
        if !<A::Access as AccessMode>::REENTRANT {
            return true;
        }
        let id = self.cell.id();
        chain::snapshot()
            .frames()
            .iter()
            .filter(|f| f.actor() == id)
            .count()
            == 1
    }

    /// Replaces the actor's state with `new` (a supervised restart) and
    /// returns the old one; hands `new` back if some other entry of this
    /// actor, further up this thread's stack, may still borrow the state.
    #[cold]
    pub(crate) fn replace_state(&mut self, new: A) -> Result<A, A> {
        if !self.may_replace_state() {
            return Err(new);
        }
        // SAFETY: `self` proves this thread holds the actor's lock, so no
        // other thread can reach the state (module invariant: a state is
        // borrowed only by the lock holder). On this thread a reference to
        // the state exists only while one of the actor's frames is on the
        // chain; the check above found exactly one, this entry's own. The
        // only references this entry ever handed out came from `access`,
        // which borrows `self`; `&mut self` here proves none of them is
        // live. So nothing borrows the state, and writing it is exclusive,
        // also for a `Shared` (reentrant) actor.
        let old = unsafe { std::ptr::replace(self.cell.state.0.get(), Some(new)) };
        Ok(old.expect("kaspar: an admitted entry found no state"))
    }
}
