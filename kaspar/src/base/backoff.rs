//! Bounded waiting for a thread that expects another thread's work soon:
//! spin, then yield, then give up so the caller can sleep.
//!
//! The shape is crossbeam-utils' `Backoff`: the spin phase issues `2^k`
//! spin-loop hints at step `k`, then the yield phase gives the core away
//! once per step, so a thread that shares the waiter's core gets to run.
//! The budget is tuned for what a waiter here does, which is *load* a word
//! another thread writes once per message (crossbeam's is tuned for
//! retrying a contended compare-and-swap), and measured with
//! `cargo bench --bench wait` on the 2-core shared Xeon VM kaspar is
//! developed on (a spin hint about 22 ns there, an uncontended `yield_now`
//! about 0.5 µs):
//!
//! * The spin phase is short: 7 hints, about 150 ns. On a busy 2-core
//!   machine the kernel tends to put a woken thread on its waker's core,
//!   so the two ends of a request-reply often share one core, and each
//!   microsecond one of them spins is a microsecond the other cannot run.
//!   With crossbeam's spin phase (127 hints, 2.8 µs) an `ask` round trip
//!   settled at 5.3 µs, with 47 hints at 3.0 µs, with 7 hints at 1.9 µs
//!   (2.3 µs for a consumer that parks at once).
//! * The yield phase is long: 16 yields, about 8 µs when no other thread
//!   wants the core. A yield costs the waiter a system call but never
//!   holds a core another thread needs, and a reply or message that comes
//!   within it costs no wake-up.
//! * It goes through [`sync`](super::sync) and has a loom budget of its own
//!   (see `SPIN_STEPS`), so the loom models explore a waiter that polls
//!   and then sleeps.
//!
//! The budget is counted in steps, not in time: a step count behaves the
//! same under loom and Miri. A waiter that has heard nothing for the whole
//! budget (about 10 µs) is asleep, so an idle actor costs nothing.

use crate::base::sync::hint;
use crate::base::sync::thread;

/// Longest run of spin hints between two polls, `2^MAX_SHIFT`, should the
/// spin phase be made longer: a poller must not oversleep.
#[cfg(not(loom))]
const MAX_SHIFT: u32 = 4;
/// Spin steps: 1, 2, then 4 hints; 7 in all.
#[cfg(not(any(loom, miri)))]
const SPIN_STEPS: u32 = 3;
/// Yield steps after the spin phase.
#[cfg(not(any(loom, miri)))]
const YIELD_STEPS: u32 = 16;

// Under loom a poll must not wait at all: loom reads a yield (and a spin
// hint, which it models as one) as "let the other threads run", so a
// waiting poll would let every producer finish first and hide the very
// interleavings that matter, where the consumer gives up polling and
// sleeps before the message comes. Two polls that do not wait keep both
// outcomes of the polling phase in the model; each poll's atomic load is
// where loom may switch threads. Miri runs a hint thousands of times
// slower, so its budget is small too.
#[cfg(loom)]
const SPIN_STEPS: u32 = 2;
#[cfg(loom)]
const YIELD_STEPS: u32 = 0;
#[cfg(all(miri, not(loom)))]
const SPIN_STEPS: u32 = 3;
#[cfg(all(miri, not(loom)))]
const YIELD_STEPS: u32 = 2;

/// A waiter's progress through its spin and yield budget.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Backoff {
    step: u32,
}

impl Backoff {
    /// A fresh budget.
    pub(crate) const fn new() -> Self {
        Backoff { step: 0 }
    }

    /// Waits one step and returns `true`, or returns `false` at once when
    /// the budget is spent (the caller should sleep).
    #[inline]
    pub(crate) fn snooze(&mut self) -> bool {
        if self.step < SPIN_STEPS {
            // Not under loom (see `SPIN_STEPS`).
            #[cfg(not(loom))]
            for _ in 0..1u32 << self.step.min(MAX_SHIFT) {
                hint::spin_loop();
            }
        } else if self.step < SPIN_STEPS + YIELD_STEPS {
            thread::yield_now();
        } else {
            return false;
        }
        self.step += 1;
        true
    }

    /// Whether the budget is spent: the next [`snooze`](Self::snooze)
    /// returns `false`.
    #[cfg(test)]
    pub(crate) fn is_spent(&self) -> bool {
        self.step >= SPIN_STEPS + YIELD_STEPS
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_budget_spins_then_yields_then_runs_out_and_stays_out() {
        let mut b = Backoff::new();
        let mut steps = 0;
        while b.snooze() {
            steps += 1;
        }
        assert_eq!(steps, SPIN_STEPS + YIELD_STEPS);
        assert!(b.is_spent());
        assert!(!b.snooze(), "a spent budget stays spent");
        assert!(!Backoff::new().is_spent());
    }
}
