//! What a pooled unit's activations hand from one to the next (its batch,
//! its first activation's start-up, its slot in the pool), with no lock.
//!
//! The scheduling state machine (module docs of `sched`) already makes
//! activations take turns: an actor is scheduled once per idle period, by
//! the one read-modify-write that clears its mailbox's idle mark, and only
//! its activation sets that mark again. What it leaves open is the tail of
//! an activation. Between the compare-and-swap that sets the mailbox idle
//! and its return, an activation still holds the carried state (the drain
//! that went idle had the batch borrowed, the batch is trimmed, the
//! deadlock detector's consumer record is cleared), and the next
//! activation may already have been scheduled and popped by another
//! worker. A mutex covered that tail at two read-modify-writes an
//! activation. This covers it with none:
//!
//! * C1: an activation that leaves stores `false` in `busy` (`Release`)
//!   after its last touch of the state, on its way out (unwinding too).
//! * C2: an activation that enters waits until it loads `false`
//!   (`Acquire`), then stores `true`. At most one activation can be
//!   waiting: another one is scheduled only after this one sets its
//!   mailbox idle, which it does only once it is in. So the load and the
//!   store need not be one read-modify-write. Builds with debug assertions
//!   (and loom) make the entry a compare-and-swap, and panic should two
//!   activations ever race for it.
//! * C3: the entering activation's `Acquire` load reads the leaving one's
//!   `Release` store, so everything the leaving activation did to the
//!   state happens before anything the entering one does. The waiting is
//!   the few instructions of the other's tail; it spins, then yields, and
//!   never parks.
//!
//! C3 orders the deadlock detector's consumer record too: an activation
//! clears it (a plain store) after going idle, and the next one's record
//! must not be overwritten by that.
//!
//! The loom model `tests/loom_carried.rs` runs two workers handing an
//! actor's activations between them, over three mailbox kinds, each
//! activation clearing its consumer record and trimming the batch after it
//! went idle, as the actor's does. With C2's wait taken out, loom reports
//! the two activations' concurrent access to the state (checked).

use crate::base::backoff::Backoff;
use crate::base::sync::{thread, AtomicBool, Ordering, UnsafeCell};

/// The state a pooled unit's activations carry, entered by one activation
/// at a time (module docs).
pub(crate) struct Carried<T> {
    busy: AtomicBool,
    state: UnsafeCell<T>,
}

// SAFETY: the state is reached only through `enter`, by one activation at
// a time (C1-C3), on whichever worker runs it: that is moving a `T`
// between threads, never sharing a `&T`, so `T: Send` is what it needs.
unsafe impl<T: Send> Sync for Carried<T> {}

impl<T> Carried<T> {
    pub(crate) fn new(state: T) -> Self {
        Carried {
            busy: AtomicBool::new(false),
            state: UnsafeCell::new(state),
        }
    }

    /// Runs `f` on the state, as the running activation: waits for the
    /// activation before it to leave (C2), and leaves when `f` returns or
    /// unwinds (C1).
    ///
    /// # Safety
    ///
    /// The caller is an activation the scheduling state machine started:
    /// the unit was scheduled once for this idle period (or this is its
    /// first activation, or it was put back on a run queue by the
    /// activation before, which has returned). That bounds the waiters to
    /// one, which C2's plain store relies on.
    #[inline]
    pub(crate) unsafe fn enter<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        self.wait_and_mark();
        let _leave = Leave(&self.busy);
        // SAFETY: C2 and C3: this activation is the only one in, and what
        // the one before did happens before this.
        self.state.with_mut(|state| f(unsafe { &mut *state }))
    }

    /// C2.
    #[inline]
    fn wait_and_mark(&self) {
        let mut backoff = Backoff::new();
        while self.busy.load(Ordering::Acquire) {
            if !backoff.snooze() {
                // The one before is descheduled in its tail: keep
                // yielding (it runs no user code there, and holds no
                // lock this thread could be holding up).
                thread::yield_now();
            }
        }
        #[cfg(any(debug_assertions, loom))]
        assert!(
            self.busy
                .compare_exchange(false, true, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok(),
            "kaspar: two activations of one pooled unit entered at once"
        );
        #[cfg(not(any(debug_assertions, loom)))]
        self.busy.store(true, Ordering::Relaxed);
    }
}

/// C1, on return and on unwind.
struct Leave<'a>(&'a AtomicBool);

impl Drop for Leave<'_> {
    #[inline]
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use std::panic::{catch_unwind, AssertUnwindSafe};
    use std::sync::{mpsc, Arc};
    use std::thread;
    use std::time::Duration;

    use super::*;

    #[test]
    fn an_activation_leaves_on_return_and_on_unwind() {
        let carried = Carried::new(0u32);
        // SAFETY: one thread, one activation at a time.
        unsafe { carried.enter(|n| *n += 1) };
        assert!(!carried.busy.load(Ordering::Relaxed));
        let unwound = catch_unwind(AssertUnwindSafe(|| {
            // SAFETY: as above.
            unsafe { carried.enter(|_| panic!("out of the activation")) }
        }));
        assert!(unwound.is_err());
        assert!(
            !carried.busy.load(Ordering::Relaxed),
            "left while unwinding"
        );
        // SAFETY: as above.
        assert_eq!(unsafe { carried.enter(|n| *n) }, 1);
    }

    /// The next activation starts while this one is in its tail (after
    /// the point where the real one sets its mailbox idle): it waits, and
    /// sees what the tail wrote. Without C2's wait it reads 1 (and Miri
    /// reports the race).
    #[test]
    fn the_next_activation_waits_for_the_tails_writes() {
        let carried = Arc::new(Carried::new(0u32));
        let (idle, scheduled) = mpsc::channel();
        let tail = {
            let carried = Arc::clone(&carried);
            thread::spawn(move || {
                // SAFETY: the first activation; the other thread enters
                // only once this one has "gone idle" (the channel).
                unsafe {
                    carried.enter(|n| {
                        *n = 1;
                        idle.send(()).unwrap();
                        thread::sleep(Duration::from_millis(if cfg!(miri) { 1 } else { 30 }));
                        *n = 2;
                    })
                }
            })
        };
        scheduled.recv().unwrap();
        // SAFETY: scheduled after the one before went idle: one waiter.
        let seen = unsafe { carried.enter(|n| *n) };
        tail.join().unwrap();
        assert_eq!(seen, 2);
    }
}
